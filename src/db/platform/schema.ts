// The platform database (DATA_DIR/platform.db). One file per table family; drizzle-kit reads this.
export * from "./catalog";
export * from "./corporations";
export * from "./settings";
export * from "./users";
export * from "./workgroups";
export * from "./menus";
export * from "./audit";
export * from "./identity";
export * from "./qrcode";
export * from "./history";
