/**
 * The capabilities Testbay sets itself in an Appium session (API.md §12): the reserved device's `appium:udid` and
 * the ports the agent assigns per device, so that sessions on one host never collide; a client's own values
 * would point Appium at another device or port. The server leaves them out of what it passes on
 * (server features/sessions/capabilities.ts) and the agent overrides them (agent appium/session-capabilities.ts).
 */
export const testbayOwnedCapabilities = [
  "appium:udid",
  "appium:systemPort",
  "appium:mjpegServerPort",
  "appium:chromedriverPort",
  "appium:wdaLocalPort",
  "appium:webkitDebugProxyPort",
] as const;
