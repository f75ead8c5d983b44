import { Type } from "typebox";
import { ApiError } from "../errors.ts";
import { isStorableText } from "./storable-text.ts";

/** `?limit=&cursor=` of every list: newest first, keyset paginated on (created_at, id). */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: "next_cursor of the previous page" })),
};

export interface Position {
  createdAt: string;
  id: string;
}

/** An opaque cursor: the position of the last item of a page. */
export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
}

export function decodeCursor(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown[];
    // A forged cursor holding a NUL would reach the query as is: refuse it like any other bad cursor.
    if (typeof createdAt === "string" && typeof id === "string" && isStorableText(createdAt + id)) {
      return { createdAt, id };
    }
  } catch {
    // fall through to the error below
  }
  throw new ApiError("invalid_request", {
    detail: "The cursor is not one this server handed out.",
    fix: "Pass next_cursor from the previous page unchanged, or leave cursor out to start from the newest.",
    extra: { errors: [{ path: "/cursor", in: "querystring", message: "is not a valid cursor" }] },
  });
}

/** Splits one extra fetched row off a page: its presence says there is a next page. */
export function toPage<T extends { createdAt: string; id: string }, V>(
  rows: T[],
  limit: number,
  view: (row: T) => V,
) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items: items.map(view),
    next_cursor:
      rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}
