/**
 * The pure parts of stream mode on MySQL/MariaDB: binlog positions as stored, compared and shown; what a rows event
 * changes (the keys to read again); which statements of the log hand a streamed table to a reconcile; and whether
 * an account's grants let it read the log.
 */
import { describe, expect, it } from 'vitest';
import {
  binlogCursor, binlogKey, binlogLagBytes, binlogPositionView, changedImages, compareBinlogPositions, formatBinlogPosition, looseKey, parseBinlogCursor, statementTargets,
} from '../../../src/search-index/changes/binlog-events.js';
import { binlogServerId, binlogStreamError, grantsReplication } from '../../../src/search-index/changes/mysql-binlog.js';

describe('binlog positions', () => {
  it('when the server lists its binary logs, then the lag is the rest of the stored file and every later file, and unknown once the file is purged', () => {
    const logs = [{ Log_name: 'mysql-bin.000002', File_size: 900 }, { Log_name: 'mysql-bin.000003', File_size: '2000' }, { Log_name: 'mysql-bin.000004', File_size: 500 }];
    expect(binlogLagBytes(logs, { file: 'mysql-bin.000003', position: 1547 })).toBe(453 + 500);
    expect(binlogLagBytes(logs, { file: 'mysql-bin.000004', position: 500 })).toBe(0);
    expect(binlogLagBytes(logs, { file: 'mysql-bin.000002', position: 4 })).toBe(896 + 2000 + 500);
    expect(binlogLagBytes(logs, { file: 'mysql-bin.000001', position: 4 })).toBeNull();
    expect(binlogLagBytes(logs, { file: 'mysql-bin.000003', position: 1547, gone: true })).toBeNull();
  });

  it('when a position is stored and read back, then it is the same, GTID, executed GTIDs and the gone mark included', () => {
    const position = { file: 'mysql-bin.000003', position: 1547, gtid: '0-1-42' };
    expect(parseBinlogCursor(binlogCursor(position))).toEqual(position);
    expect(parseBinlogCursor(binlogCursor({ ...position, gone: true }))).toEqual({ ...position, gone: true });
    expect(parseBinlogCursor(binlogCursor({ ...position, gtid: null }))).toEqual({ ...position, gtid: null });
    // The executed GTIDs a stream resumes from, in either server's form; a position stored without them has none.
    for (const gtidSet of ['0-1-42,1-2-7', '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42']) {
      expect(parseBinlogCursor(binlogCursor({ ...position, gtidSet }))).toEqual({ ...position, gtidSet });
    }
    expect(parseBinlogCursor(JSON.stringify({ ...position, gtidSet: '' }))).toEqual(position);
  });

  it('when the cursor is none, a PostgreSQL LSN or malformed, then no binlog position is read from it', () => {
    for (const cursor of [null, undefined, '', JSON.stringify('0/16B3748'), '{', JSON.stringify({ file: '', position: 10 }), JSON.stringify({ file: 'mysql-bin.000001', position: 2 }), JSON.stringify({ file: 'mysql-bin.000001', position: 1.5 })]) {
      expect(parseBinlogCursor(cursor)).toBeNull();
    }
  });

  it('when two positions are compared, then files go by their number and offsets within a file', () => {
    expect(compareBinlogPositions({ file: 'mysql-bin.000009', position: 900 }, { file: 'mysql-bin.000010', position: 4 })).toBeLessThan(0);
    expect(compareBinlogPositions({ file: 'mysql-bin.000010', position: 4 }, { file: 'mysql-bin.000009', position: 900 })).toBeGreaterThan(0);
    expect(compareBinlogPositions({ file: 'mysql-bin.000002', position: 120 }, { file: 'mysql-bin.000002', position: 400 })).toBeLessThan(0);
    expect(compareBinlogPositions({ file: 'mysql-bin.000002', position: 400 }, { file: 'mysql-bin.000002', position: 400 })).toBe(0);
    expect(compareBinlogPositions({ file: 'mysql-bin.999999', position: 4 }, { file: 'mysql-bin.1000000', position: 4 })).toBeLessThan(0);
  });

  it('when a position is shown, then it reads file:offset with its GTID, and the endpoint gets the three fields', () => {
    expect(formatBinlogPosition({ file: 'mysql-bin.000003', position: 1547, gtid: '0-1-42' })).toBe('mysql-bin.000003:1547 (GTID 0-1-42)');
    expect(formatBinlogPosition({ file: 'mysql-bin.000003', position: 1547, gtid: null })).toBe('mysql-bin.000003:1547');
    expect(binlogPositionView(binlogCursor({ file: 'mysql-bin.000003', position: 1547, gtid: null, gone: true }))).toEqual({ file: 'mysql-bin.000003', position: 1547, gtid: null });
    expect(binlogPositionView(null)).toBeNull();
  });
});

describe('rows events', () => {
  const table = { primaryKey: ['shop', 'id'] };

  it('when an insert or a delete comes, then each row image is a key to read again', () => {
    const rows = [{ shop: 1, id: 10, title: 'kettle' }, { shop: 1, id: 11, title: 'pan' }];
    expect(changedImages('writerows', rows)).toEqual(rows);
    expect(changedImages('deleterows', rows)).toEqual(rows);
  });

  it('when an update comes, then the keys before and after are both read again (a key may change)', () => {
    const images = changedImages('updaterows', [{ before: { shop: 1, id: 4, title: 'a' }, after: { shop: 1, id: 8, title: 'a' } }]);
    expect(images.map((image) => binlogKey(table, image))).toEqual([[1, 4], [1, 8]]);
  });

  it('when a key column is missing from the image (a minimal row image), then no key is read from it', () => {
    expect(binlogKey(table, { id: 3, title: 'b' })).toBeNull();
  });

  it('when a 64-bit key comes as a bigint, then it is the number the driver returns, or its digits beyond exact numbers', () => {
    expect(binlogKey({ primaryKey: ['id'] }, { id: 42n })).toEqual([42]);
    expect(binlogKey({ primaryKey: ['id'] }, { id: 9007199254740993n })).toEqual(['9007199254740993']);
  });

  it('when the same key comes as a number and as text, then both name one row', () => {
    expect(looseKey([5, 'a'])).toBe(looseKey(['5', 'a']));
    expect(looseKey([5, 'a'])).not.toBe(looseKey([6, 'a']));
  });
});

describe('statements of the log', () => {
  const names = ['kettles', 'pans'];

  it('when a TRUNCATE, ALTER, DROP or RENAME names a streamed table, then that table is reconciled', () => {
    expect(statementTargets('TRUNCATE TABLE kettles', 'test', 'test', names)).toEqual(['kettles']);
    expect(statementTargets('truncate `kettles`', 'test', 'test', names)).toEqual(['kettles']);
    expect(statementTargets('ALTER TABLE `test`.`pans` ADD COLUMN colour varchar(20)', 'other', 'test', names)).toEqual(['pans']);
    expect(statementTargets('DROP TABLE IF EXISTS kettles /* generated by server */', 'test', 'test', names)).toEqual(['kettles']);
    expect(statementTargets('RENAME TABLE kettles TO kettles_old, pans TO pots', 'test', 'test', names)).toEqual(['kettles', 'pans']);
  });

  it('when a statement names another table, another schema or only frames a transaction, then nothing is reconciled', () => {
    expect(statementTargets('ALTER TABLE kettles_archive ADD COLUMN x int', 'test', 'test', names)).toEqual([]);
    expect(statementTargets('ALTER TABLE other.kettles ADD COLUMN x int', 'test', 'test', names)).toEqual([]);
    expect(statementTargets('TRUNCATE kettles', 'other', 'test', names)).toEqual([]);
    expect(statementTargets('BEGIN', 'test', 'test', names)).toEqual([]);
    expect(statementTargets('COMMIT', 'test', 'test', names)).toEqual([]);
    expect(statementTargets("GRANT SELECT ON test.kettles TO 'a'@'%'", 'test', 'test', names)).toEqual([]);
  });
});

describe('grants and errors', () => {
  it('when the grants include REPLICATION SLAVE or ALL on *.*, or a role that may carry it, then the account may read the log', () => {
    expect(grantsReplication(["GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `quarry`@`%`"])).toBe(true);
    expect(grantsReplication(["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"])).toBe(true);
    expect(grantsReplication(["GRANT USAGE ON *.* TO `quarry`@`%`", 'GRANT `reader` TO `quarry`@`%`'])).toBe(true);
    expect(grantsReplication(["GRANT USAGE ON *.* TO `quarry`@`%`", 'GRANT SELECT ON `test`.* TO `quarry`@`%`'])).toBe(false);
    expect(grantsReplication(['GRANT ALL PRIVILEGES ON `test`.* TO `quarry`@`%`'])).toBe(false);
  });

  it('when the server refuses the reader or no longer has the position, then the error says what to grant, or that the position is lost', () => {
    const denied = Object.assign(new Error('Access denied; you need (at least one of) the REPLICATION SLAVE privilege(s)'), { errno: 1227 });
    expect(binlogStreamError(denied, "'quarry'@'%'")).toMatchObject({ code: 'STREAM_NOT_ALLOWED', message: expect.stringContaining("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'quarry'@'%'") });
    const purged = Object.assign(new Error('Could not find first log file name in binary log index file'), { errno: 1236 });
    expect(binlogStreamError(purged, "'quarry'@'%'")).toMatchObject({ code: 'STREAM_POSITION_LOST' });
    const other = new Error('socket hang up');
    expect(binlogStreamError(other, "'quarry'@'%'")).toBe(other);
  });

  it('when a connection has a replica server id, then it is stable and far from the small ids servers use', () => {
    expect(binlogServerId('db_2hT8kP4wQz6mN1vR9xC3bL')).toBe(binlogServerId('db_2hT8kP4wQz6mN1vR9xC3bL'));
    expect(binlogServerId('db_a')).not.toBe(binlogServerId('db_b'));
    expect(binlogServerId('db_a')).toBeGreaterThanOrEqual(1_000_000);
    expect(binlogServerId('db_a')).toBeLessThan(2 ** 32);
  });
});
