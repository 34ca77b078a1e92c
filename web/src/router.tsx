import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** A few client paths, read from and pushed to the history (the server answers index.html for them). */
export function navigate(to: string): void {
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): URL {
  const [href, setHref] = useState(location.href);
  useEffect(() => {
    const update = () => setHref(location.href);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return new URL(href);
}

/** A link that changes page without reloading; modified clicks keep the browser's behaviour. */
export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={follow} {...rest} />;
}
