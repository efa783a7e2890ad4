/**
 * What a log has committed since it was opened, counted by this process.
 *
 * `commits` counts the transactions that stored at least one fact: each one waited for
 * its WAL flush before any caller was told (SQLite with `synchronous=FULL`, PostgreSQL
 * with `synchronous_commit` at least `local`), so the difference over a stretch of work is
 * how many durable commits — fsyncs of the log's WAL — that work waited for. A batch
 * every write of which a rule refused writes nothing and is not counted; neither is a
 * batch that failed, even `outcome_unknown`. An in-memory log counts its commits the
 * same way, though nothing is flushed. Checkpoints (SQLite copying its WAL into the
 * file, in the background of some commit) are not commits.
 *
 * `facts` counts the facts those commits stored.
 *
 * `commitMs` is the time those commits took, each from its first statement to its
 * answer (`BEGIN` to `COMMIT` and its fsync, or a lone insert with its own): where the
 * time of a piece of work goes, set beside the same work on an in-memory log.
 */
/**
 * `oneTrip` counts those commits whose whole transaction went to PostgreSQL as one
 * message; `staleHeads` the one-message tries that found another writer had moved the
 * chain's head, wrote nothing, and went again the two-trip way (see the README).
 */
export type LogStats = {
  readonly commits: number;
  readonly facts: number;
  readonly commitMs: number;
  readonly oneTrip: number;
  readonly staleHeads: number;
};
