/** A listen failure a person can fix by configuration, said as one line with the fix; undefined otherwise. */
export function listenHint(error: unknown, port: number, host: string): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") {
    return `port ${port} is in use: set TESTBAY_PORT=${port === 65535 ? port - 1 : port + 1} (or another free port) or stop the other process`;
  }
  if (code === "EACCES") {
    return `port ${port} needs privileges this user does not have: set TESTBAY_PORT to a port above 1023 (e.g. TESTBAY_PORT=8080)`;
  }
  if (code === "EADDRNOTAVAIL") {
    return `this machine has no address ${host}: set TESTBAY_HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for all)`;
  }
  return undefined;
}
