/**
 * One HTTP attempt of a delivery: POST the body, wait at most `timeoutMs` for connection, status and the
 * first KiB of the answer, and say what happened. Never throws: every failure is an attempt the log shows.
 */
import { Agent, request } from "undici";
import {
  AddressNotAllowedError,
  addressNotAllowed,
  guardedLookup,
  isPublicAddress,
  literalAddress,
  type ResolveAll,
} from "./address-guard.ts";

export interface AttemptOutcome {
  /** Null when no answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  durationMs: number;
  /** Why it did not succeed; null on a 2xx. */
  error: string | null;
  /** The first KiB of the response body, as text. */
  responseExcerpt: string | null;
}

export const responseExcerptBytes = 1024;

export interface AttemptSenderOptions {
  allowPrivate: boolean;
  resolveAll: ResolveAll;
  /** API.md §9: 10 s, connecting included. */
  timeoutMs: number;
}

export class AttemptSender {
  private readonly agent: Agent;

  constructor(private readonly options: AttemptSenderOptions) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.resolveAll, options.allowPrivate) },
      // Connections are reused between attempts to one receiver, but not for long: a receiver's address may
      // change (its DNS), and each new connection is checked again.
      keepAliveTimeout: 4000,
    });
  }

  /** POSTs `body` to `url` with exactly `headers` (undici adds host, content-length and connection). */
  async send(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const literal = literalAddress(new URL(url));
    // net.connect does not look a literal up, so the lookup's check never sees it: check it here.
    if (literal !== undefined && !this.options.allowPrivate && !isPublicAddress(literal)) {
      return { statusCode: null, durationMs: elapsed(), error: addressNotAllowed, responseExcerpt: null };
    }
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await request(url, {
        method: "POST",
        // As made by webhookRequest (webhook-request.ts), which the delivery log keeps: what it shows is sent.
        headers,
        body,
        dispatcher: this.agent,
        signal,
        // undici's request never follows redirects; a 3xx is an answer like any other non-2xx.
      });
      const excerpt = await readExcerpt(response.body);
      const statusCode = response.statusCode;
      const ok = statusCode >= 200 && statusCode < 300;
      let error: string | null = null;
      if (!ok) {
        const location = response.headers.location;
        error =
          statusCode >= 300 && statusCode < 400
            ? `redirect to ${String(location ?? "nowhere")} not followed: answer with a 2xx at the URL itself`
            : `HTTP ${statusCode}`;
      }
      return { statusCode, durationMs: elapsed(), error, responseExcerpt: excerpt };
    } catch (error) {
      return {
        statusCode: null,
        durationMs: elapsed(),
        error: describe(error, signal),
        responseExcerpt: null,
      };
    }
  }

  /** Cuts off every connection, requests in flight included. */
  destroy(): Promise<void> {
    return this.agent.destroy();
  }
}

/** The first KiB of the body as text; the rest is not read (the connection is dropped, not drained). */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= responseExcerptBytes) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, responseExcerptBytes).toString("utf8");
}

function describe(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "no answer within the timeout";
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof AddressNotAllowedError) return addressNotAllowed;
  }
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message;
}
