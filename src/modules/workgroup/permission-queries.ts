// The one permission query (routes.md, "Permission computation"), for the kernel's cache
// (src/core/permissions.ts): per working corporation, the services granted to the user's
// workgroups, and the actions of the granted features, counting only services enabled for the
// corporation. Grants are the workgroup module's tables; the joins read the catalog (services,
// features, actions) and corp_services read-only, as the one place where they meet.
import type { PermissionQueries } from "../../core/permissions";

export const permissionQueries: PermissionQueries = {
  grantedServices: (db, userId, corpId) =>
    db.$client
      .query<{ identifier: string }, [string, string]>(
        `SELECT DISTINCT s.identifier FROM workgroup_members wm
         JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
         JOIN workgroup_services ws ON ws.workgroup_id = w.id
         JOIN services s ON s.id = ws.service_id
         JOIN corp_services cs ON cs.corp_id = ?1 AND cs.service_id = s.id
         WHERE wm.user_id = ?2 ORDER BY s.identifier`,
      )
      .all(corpId, userId)
      .map((r) => r.identifier),
  grantedActions: (db, userId, corpId) =>
    db.$client
      .query<{ identifier: string; action: string }, [string, string]>(
        `SELECT DISTINCT s.identifier, a.action FROM workgroup_members wm
         JOIN workgroups w ON w.id = wm.workgroup_id AND w.corp_id = ?1
         JOIN workgroup_features wf ON wf.workgroup_id = w.id
         JOIN features f ON f.id = wf.feature_id
         JOIN services s ON s.id = f.service_id
         JOIN actions a ON a.feature_id = f.id
         JOIN corp_services cs ON cs.corp_id = ?1 AND cs.service_id = s.id
         WHERE wm.user_id = ?2 ORDER BY a.action, s.identifier`,
      )
      .all(corpId, userId),
  enabledServices: (db, corpId) =>
    db.$client
      .query<{ identifier: string }, [string]>(
        "SELECT s.identifier FROM corp_services cs JOIN services s ON s.id = cs.service_id WHERE cs.corp_id = ?1 ORDER BY s.identifier",
      )
      .all(corpId)
      .map((r) => r.identifier),
};
