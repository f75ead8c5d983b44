export { bootstrapDefaultOrganization, firstStartClientNames, nameFirstStartClients } from "./bootstrap.ts";
export { checkClientName, clientNameRule, maxClientNameLength } from "./client-name.ts";
export { createClients } from "./clients.feature.ts";
export { type ClientRecord, ClientsRepo, type OrganizationRecord } from "./clients.repo.ts";
export { clientsRoutes } from "./clients.routes.ts";
export { AdminError, ClientsService, clientRoles, type IssuedCredentials } from "./clients.service.ts";
export { pointCredentialsAt } from "./credentials-base-url.ts";
export { hashSecret, verifyAgainstDecoy, verifySecret } from "./secret-hash.ts";
