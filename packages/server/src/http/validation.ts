import AjvModule from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { cachedValidator } from "./compiled-schemas.ts";

// ajv and ajv-formats are CommonJS with a default export.
const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function makeAjv(coerceTypes: boolean | "array") {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // Lets a oneOf tagged by a property (test plan steps, by `type`) report the errors of the matching branch.
    discriminator: true,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * JSON bodies are validated as sent: `"5"` is not a number and `5` is not a string, so a client's type
 * mistakes are reported rather than papered over. Query strings, path parameters and headers are text by
 * nature, so `?limit=3` is coerced to the number the schema asks for.
 */
export function registerValidation(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const coercing = makeAjv("array");
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === "body"
      ? cachedValidator("strict", schema, () => strict.compile(schema))
      : cachedValidator("coercing", schema, () => coercing.compile(schema)),
  );
}
