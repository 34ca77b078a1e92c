import type { AnchorHTMLAttributes } from 'react';
import { Link } from 'react-router';
import type { AppPath } from '../lib/paths';

/**
 * A link inside the application: changes screen without reloading (modified clicks keep the
 * browser's behaviour). `to` is typed: only an address built by lib/paths.ts.
 */
export function AppLink({ to, ...rest }: Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: AppPath }) {
  // discover="none": no route discovery (a framework-mode feature) and no data attribute on the link.
  return <Link to={to} discover="none" {...rest} />;
}
