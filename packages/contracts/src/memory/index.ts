export * from "./modelConfigs";
export * from "./actorMemory";
export * from "./phaseMemory";
export * from "./runMemory";
