import { formatLocal, formatUtc } from "../format/time.ts";

/** A time in the reader's zone, with its UTC value on hover (title) and for machines (datetime). */
export function Timestamp({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="text-muted">—</span>;
  return (
    <time dateTime={value} title={formatUtc(value)}>
      {formatLocal(value)}
    </time>
  );
}
