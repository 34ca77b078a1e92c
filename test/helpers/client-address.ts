import http from 'node:http';

/**
 * A `fetch` whose connections leave from `localAddress` (127.0.0.2, 127.0.0.3…: other client
 * addresses of the loopback interface; connecting *to* 127.0.0.2 would still leave from 127.0.0.1).
 * Enough of fetch for the tests: method, headers, a string body, no redirect following.
 */
export function fetchFrom(localAddress: string): typeof fetch {
  return ((input: string | URL, init: RequestInit = {}) => {
    const url = new URL(String(input));
    return new Promise<Response>((resolve, reject) => {
      const req = http.request({
        host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: init.method ?? 'GET',
        headers: init.headers as Record<string, string> | undefined, localAddress,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
          }
          const status = res.statusCode ?? 500;
          resolve(new Response([204, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers }));
        });
      });
      req.on('error', reject);
      if (init.body !== undefined && init.body !== null) req.write(init.body as string);
      req.end();
    });
  }) as typeof fetch;
}
