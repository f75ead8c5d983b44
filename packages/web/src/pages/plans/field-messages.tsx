/** The API's messages for one field, right under it (and named by the field's aria-describedby). */
export function FieldMessages({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages?.length) return null;
  return (
    <p id={id} className="text-xs text-red-700 dark:text-red-300">
      {messages.join("; ")}
    </p>
  );
}
