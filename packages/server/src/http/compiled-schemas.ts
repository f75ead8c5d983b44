/**
 * Compiled request validators and response serializers, kept for the process and shared by every server it
 * builds, found again by the schema's JSON. A deployed process builds one server, which compiles each route's
 * schemas once either way; the test suites build hundreds of servers per worker process (harness.ts), and
 * compiling the routes' schemas again for each was 1.2 s of the 1.3 s of CPU a test server's start cost on the
 * 2-core CI machine (a CPU profile of startTestServer: Ajv, fast-json-stringify and the compilation of the code
 * they generate). A compiled function depends only on its schema and on the compiler's options and shared
 * schemas, which the key holds too; it keeps the compiler that made it alive, as Fastify itself does.
 */
import SerializerSelector from "@fastify/fast-json-stringify-compiler";

const validators = new Map<string, unknown>();
const serializers = new Map<string, SerializerSelector.Serializer>();

/** `compile()`, or what an equal schema compiled to before under the same `scope` (the compiler's options). */
export function cachedValidator<T>(scope: string, schema: unknown, compile: () => T): T {
  const key = `${scope}\n${JSON.stringify(schema)}`;
  if (!validators.has(key)) validators.set(key, compile());
  return validators.get(key) as T;
}

const defaultSerializers = SerializerSelector.SerializerSelector();

/**
 * Fastify's `schemaController.compilersFactory.buildSerializer`: its own (fast-json-stringify), with each
 * compiled serializer kept for the process.
 */
export const buildCachedSerializer: SerializerSelector.SerializerFactory = (externalSchemas, options) => {
  const build = defaultSerializers(externalSchemas, options);
  const scope = JSON.stringify([externalSchemas, options]);
  return (route) => {
    const key = `${scope}\n${JSON.stringify(route.schema)}`;
    let found = serializers.get(key);
    if (!found) {
      found = build(route);
      serializers.set(key, found);
    }
    return found;
  };
};
