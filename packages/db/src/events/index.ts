export { storeEvents } from "./storeEvents";
export { listEventsAfter } from "./listEvents";
export { appendToStream, readStreamAfter, expireStream, STREAM_MAX_LEN, FINISHED_STREAM_TTL_S } from "./stream";
export { deriveRows } from "./derivedRows";
export { parseEvents } from "./parse";
export type { EventStoreDb } from "./dbClient";
