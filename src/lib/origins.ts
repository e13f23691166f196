/**
 * Web origins as browsers send them in the `Origin` header (RFC 6454 serialisation: scheme, host and a port other
 * than the scheme's default, lower case, no path). CORS_ORIGINS and a publishable key's allowedOrigins are written
 * by people, so they are read into that form once and then compared with the header as plain strings.
 */

/** The serialised origin of `text` (`https://Shop.example.com:443/` -> `https://shop.example.com`), or null. */
export function normalizeOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // An origin has no path, query, fragment or user: anything more is a URL, and a key bound to it would never match.
  if (url.username || url.password || url.pathname !== '/' || /[?#]/.test(text)) return null;
  return url.origin;
}
