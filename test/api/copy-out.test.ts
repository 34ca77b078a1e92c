/**
 * copyOutColumn (src/db/transaction.ts), which the planning route reads its parts with: the
 * values of COPY binary data come out as sent, however the data messages cut them (the server
 * sends one row a message, but nothing in the protocol promises it), and against PostgreSQL.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { copyOutColumn } from '../../src/db/transaction.js';
import { TEST_ROOT_URL } from '../helpers/settings.js';

/** COPY binary data of one column: signature, flags, no header extension, rows, -1. */
function copyData(values: Array<Buffer | null>): Buffer {
  const rows = values.map((value) => {
    const head = Buffer.alloc(6);
    head.writeInt16BE(1, 0);
    head.writeInt32BE(value ? value.length : -1, 2);
    return value ? Buffer.concat([head, value]) : head;
  });
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  return Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8), ...rows, trailer]);
}

/** A client that answers the COPY with `data` in messages of the given sizes, in reused buffers. */
function fakeClient(data: Buffer, sizes: () => number): pg.ClientBase {
  return {
    query(query: { handleCopyData(m: { chunk: Buffer }): void; handleReadyForQuery(c: unknown): void }) {
      const scratch = Buffer.alloc(data.length);
      for (let at = 0; at < data.length;) {
        const size = Math.min(sizes(), data.length - at);
        data.copy(scratch, 0, at, at + size);
        query.handleCopyData({ chunk: scratch.subarray(0, size) });
        scratch.fill(0xff); // the driver reuses its buffer: a value kept as a view would change
        at += size;
      }
      query.handleReadyForQuery({});
    },
  } as unknown as pg.ClientBase;
}

describe('copyOutColumn', () => {
  const values = [Buffer.from('{"a":'), null, Buffer.from('héllo', 'utf8'), Buffer.alloc(0), Buffer.alloc(70_000, 0xc3), Buffer.from('}')];
  const data = copyData(values);

  it('one message, one byte at a time, and messages of random sizes: the same values', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) % 97 + 1;
    for (const sizes of [() => data.length, () => 1, random]) {
      expect(await copyOutColumn(fakeClient(data, sizes), 'copy')).toEqual(values);
    }
  });

  it('data that is not COPY binary, or ends without its trailer, is an error', async () => {
    await expect(copyOutColumn(fakeClient(Buffer.from('not a copy at all, not at all'), () => 8), 'copy')).rejects.toThrow(/COPY binary/);
    await expect(copyOutColumn(fakeClient(data.subarray(0, data.length - 2), () => 1000), 'copy')).rejects.toThrow(/no end/);
  });

  it('against PostgreSQL: bytes that are not UTF-8 come out as they are', async () => {
    const client = new pg.Client({ connectionString: TEST_ROOT_URL });
    await client.connect();
    try {
      const parts = await copyOutColumn(client,
        "copy (select x from (values ('\\x00ff41c3'::bytea, 1), (null, 2), (convert_to('é', 'UTF8'), 3)) v(x, n) order by n) to stdout (format binary)");
      expect(parts).toEqual([Buffer.from([0x00, 0xff, 0x41, 0xc3]), null, Buffer.from('é')]);
    } finally {
      await client.end();
    }
  });
});
