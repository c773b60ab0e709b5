// String formats checked by the route schemas. @elysiajs/openapi replaces TypeBox's global format
// checks with ones that build a new Zod schema on every call (≈ 100 µs per `uuid` check, several
// per request); these plain expressions take their place again. Imported after the plugin.
import { FormatRegistry } from "@sinclair/typebox";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The practical subset of RFC 5322 that mail systems accept: local@domain.tld, no spaces.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

export function registerFormats(): void {
  FormatRegistry.Set("uuid", (v) => UUID.test(v));
  FormatRegistry.Set("email", (v) => v.length <= 254 && EMAIL.test(v));
  FormatRegistry.Set("date-time", (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));
  FormatRegistry.Set("uri", (v) => URL.canParse(v));
}
