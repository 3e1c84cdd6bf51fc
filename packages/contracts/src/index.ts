export * from "./runSpec";
export * from "./events";
export * from "./queue";
export * from "./demo";
export * from "./issues";
export * from "./control";
export * from "./actorRules";
