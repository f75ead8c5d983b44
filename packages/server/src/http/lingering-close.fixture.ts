import { execFile } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";

export interface RefusedUploadResult {
  /** The final response's status; undefined when none was read (a reset got there first). */
  status: number | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on problem documents field by field
  json: any;
  /** Body bytes the client's kernel accepted (loopback buffers hold megabytes the server never read). */
  bodySent: number;
  /** The server half-closed (FIN) after its answer. */
  endedByServer: boolean;
  /**
   * The connection was closed within `closeWaitMs` of the client finishing its part. A client that stopped
   * sending (`stopOnAnswer`) and got the FIN does not notice a later close or reset, so this tells only for
   * a client that sends on.
   */
  closedByServer: boolean;
  /** The socket error the client saw, if any. */
  error: string | undefined;
}

const chunk = Buffer.alloc(64 * 1024, 0x5a);

/**
 * A client that sends a request head, then `bodyBytes` of body as fast as the socket takes them without waiting
 * for any answer (no Expect), reading whatever comes back meanwhile, as curl or Go's client do. It keeps its
 * side open when the server half-closes (allowHalfOpen), like a client busy sending. With `stopOnAnswer` it
 * stops sending once the final response is complete; otherwise it sends on until the server closes.
 */
export async function sendRefusedUpload(
  origin: string,
  head: string,
  bodyBytes: number,
  options: { stopOnAnswer: boolean; closeWaitMs?: number },
): Promise<RefusedUploadResult> {
  const url = new URL(origin);
  const socket = net.connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
  let received = Buffer.alloc(0);
  let closed = false;
  let ended = false;
  let error: string | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  socket.on("data", (data: Buffer) => {
    received = Buffer.concat([received, data]);
    notify();
  });
  socket.on("drain", notify);
  socket.on("end", () => {
    ended = true;
    notify();
  });
  socket.on("close", () => {
    closed = true;
    notify();
  });
  socket.on("error", (e: NodeJS.ErrnoException) => {
    error ??= e.code ?? e.message;
  });
  const next = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });

  let bodySent = 0;
  socket.write(head, "latin1");
  while (bodySent < bodyBytes && !closed && !(options.stopOnAnswer && parseFinal(received)?.complete)) {
    const piece = chunk.subarray(0, Math.min(chunk.length, bodyBytes - bodySent));
    const accepted = socket.write(piece, (failed) => {
      if (!failed) bodySent += piece.length;
    });
    if (!accepted) await next(1_000);
  }
  const deadline = Date.now() + (options.closeWaitMs ?? 10_000);
  const finished = () => closed || (options.stopOnAnswer && ended);
  while (!finished() && Date.now() < deadline) await next(deadline - Date.now());
  socket.destroy();
  const final = parseFinal(received);
  let json: unknown;
  try {
    json = final?.complete ? JSON.parse(final.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: final?.status, json, bodySent, endedByServer: ended, closedByServer: closed, error };
}

function parseFinal(received: Buffer): { status: number; body: string; complete: boolean } | undefined {
  const text = received.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = text.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  const body = received.subarray(end + 4, end + 4 + length);
  return { status, body: body.toString("utf8"), complete: body.length >= length };
}

interface ChildArgs {
  origin: string;
  head: string;
  bodyBytes: number;
  tries: number;
  stopOnAnswer: boolean;
}

/**
 * sendRefusedUpload `tries` times in turn from a child process. A client in the server's own process shares its
 * event loop, which orders the server's close after the client's read of the answer: the reset that loses the
 * answer only shows when client and server run side by side, as they do in real life.
 */
export function sendRefusedUploadsFromAnotherProcess(args: ChildArgs): Promise<RefusedUploadResult[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", fileURLToPath(import.meta.url), JSON.stringify(args)],
      { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 + args.tries * 15_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as RefusedUploadResult[]);
      },
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = JSON.parse(process.argv[2] ?? "{}") as ChildArgs;
  const results: RefusedUploadResult[] = [];
  for (let i = 0; i < args.tries; i++) {
    results.push(
      await sendRefusedUpload(args.origin, args.head, args.bodyBytes, { stopOnAnswer: args.stopOnAnswer }),
    );
  }
  process.stdout.write(JSON.stringify(results));
}
