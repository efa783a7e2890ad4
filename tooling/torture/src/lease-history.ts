import { withClient } from '@factum/event-log/testing';

/**
 * One version of a host's lease row as PostgreSQL committed it: registered, renewed or
 * released. `recordedAt` is the database's clock (`clock_timestamp()`) inside the
 * writing statement: a lease statement is one autocommitted statement, so it commits
 * right after — whatever a network does to its answer afterwards.
 */
export type LeaseRecord = {
  readonly hostId: string;
  readonly epoch: number;
  readonly expiresAt: number;
  readonly recordedAt: number;
};

/**
 * Makes the database keep every committed version of its `hosts` rows, in the
 * statement's own transaction: a registration, renewal or release that rolls back
 * leaves nothing, one that commits leaves its row even if its answer never reached the
 * host (a network holding it). The log's own tables are left as they are: a trigger
 * beside them, in a table of the harness.
 */
export async function recordLeaseHistory(url: string): Promise<void> {
  await withClient(url, (client) =>
    client.query(`
      create table if not exists torture_lease_history (
        host_id text not null,
        epoch bigint not null,
        expires_at bigint not null,
        recorded_at bigint not null
      );
      create or replace function torture_record_lease() returns trigger language plpgsql as $$
      begin
        insert into torture_lease_history (host_id, epoch, expires_at, recorded_at)
        values (new.host_id, new.epoch, new.expires_at, (extract(epoch from clock_timestamp()) * 1000)::bigint);
        return new;
      end $$;
      drop trigger if exists torture_lease_history on hosts;
      create trigger torture_lease_history after insert or update on hosts
        for each row execute function torture_record_lease();
    `),
  );
}

/** Every committed lease version `recordLeaseHistory` kept, oldest first. */
export async function readLeaseHistory(url: string): Promise<LeaseRecord[]> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ host_id: string; epoch: string; expires_at: string; recorded_at: string }>(
      'select host_id, epoch, expires_at, recorded_at from torture_lease_history order by recorded_at',
    ),
  );
  return rows.map((row) => ({
    hostId: row.host_id,
    epoch: Number(row.epoch),
    expiresAt: Number(row.expires_at),
    recordedAt: Number(row.recorded_at),
  }));
}
