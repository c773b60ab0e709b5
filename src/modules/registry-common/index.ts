// TEMPORARY SHIM (issue 16): the registry pieces now live with their owners — addresses in
// modules/address, external apps and links in modules/externalapp, raw row writes in db/rows.ts.
// contract, product and classification still import them from here under these names; the lead
// deletes this folder at merge after pointing those imports at the owners.
import type { TenantDb } from "../../db/sqlite";

export { AddressExternalInput, AddressInput, AddressView, CityExternalInput, CityRef } from "../address/model";
export { ADDRESS_COLUMN_NAMES, addressColumns, type AddressColumns } from "../address/columns";
export { addressView, checkCityId } from "../address/service";
export { cityRef } from "../city/service";
export { AppById, AppByIdIdentity, AppByName, AppByNameIdentity, ExternalLinkInput, ExternalLinkView, type RecordType } from "../externalapp/model";
export { findApp, resolveApp, type ExternalAppRow } from "../externalapp/service";
export { identitiesOf, identityListField, linkedIdsOf, linkedRecordId, linkRecord, linkView, unlinkAll } from "../externalapp/link-service";
export { clientOf, insertRow, updateRow, type RowCells } from "../../db/rows";
export { commit, commitGrouped, linkFromRequest } from "./legacy";

/** A handle a door hands in (read or write). */
export type Db = TenantDb;
export type Tx = TenantDb;
