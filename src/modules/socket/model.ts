import { t } from "elysia";
import { TICKET_SECONDS } from "./hub";

export const SocketTicket = t.Object({
  ticket: t.String(),
  expires_in: t.Literal(TICKET_SECONDS),
  url: t.String({ description: "ws(s) URL of /api/socket with the ticket" }),
});

export const SocketQuery = t.Object({ ticket: t.Optional(t.String({ maxLength: 200 })) });

export const UpgradeRequired = t.Object({ detail: t.String() });
