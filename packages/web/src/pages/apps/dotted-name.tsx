import { Fragment } from "react";

/**
 * A package or class name that may wrap after its dots ("com.example.basic.test" on a phone), never inside a
 * word: a break opportunity (<wbr>) after each dot; a single overlong segment still wraps rather than overflow.
 */
export function DottedName({ name }: { name: string }) {
  const parts = name.split(".");
  return (
    <span className="break-words">
      {parts.map((part, index) => (
        // The segments of one name: their position is their identity.
        // biome-ignore lint/suspicious/noArrayIndexKey: segments repeat ("com.example.com")
        <Fragment key={index}>
          {part}
          {index < parts.length - 1 && (
            <>
              .<wbr />
            </>
          )}
        </Fragment>
      ))}
    </span>
  );
}
