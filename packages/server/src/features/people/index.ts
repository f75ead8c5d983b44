export { defaultLoginLimits, type LoginLimitSettings } from "./login-limits.ts";
export { oidcRoutes } from "./oidc.routes.ts";
export { OidcSignIn } from "./oidc-sign-in.ts";
export { OidcStateSealer } from "./oidc-state.ts";
export { createPeople } from "./people.feature.ts";
export { PeopleRepo, type UserRecord } from "./people.repo.ts";
export { peopleRoutes } from "./people.routes.ts";
export { AmbiguousEmailError, type IssuedAccount, PeopleService, personRoles } from "./people.service.ts";
export { CookieSessionAuthentication } from "./session-authentication.ts";
