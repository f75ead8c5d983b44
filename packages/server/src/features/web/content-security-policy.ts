/**
 * The dashboard runs only its own files: no inline script (the theme's first-paint script is a file too), no
 * other origin, no framing. A script injected into a page could act with the person's session; this makes that
 * much harder. Inline styles are allowed: Radix's menus add a <style> element while open (scroll locking), and a
 * style cannot run code.
 */
export const dashboardContentSecurityPolicy = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
].join("; ");
