// A corporation database (<server dir>/<corp id>.db). One file per table family; drizzle-kit reads this.
export * from "./events";
export * from "./metrics";
