// A corporation database (<server dir>/<corp id>.db). One file per table family; drizzle-kit reads this.
export * from "./events";
export * from "./notepad";
export * from "./isp";
export * from "./registry";
export * from "./webhooks";
export * from "./qrcode";
export * from "./metrics";
export * from "./history";
