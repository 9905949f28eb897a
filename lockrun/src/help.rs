//! The text `lockrun --help` shows after the options: examples, guarantees, exit statuses.

/// Shown after the options of `lockrun --help`.
pub(crate) const AFTER_HELP: &str = "EXAMPLES:
    # Run the nightly report on one replica only; others wait up to 5 minutes, then give up.
    lockrun --url postgres://app@db/app --name reports/nightly --wait 5m -- ./nightly-report

    # Skip the run if another host is already doing it (wait 0).
    lockrun --url redis://cache:6379 --name cron/cleanup --wait 0s -- ./cleanup.sh

    # Single host, no server: an SQLite file shared by every process on the machine.
    lockrun --url sqlite:///var/lib/lockrun/locks.db --name backup -- tar czf /backup/db.tgz /data

    # Who holds reports/nightly, and which locks under reports/ are held (LOCKRUN_URL set).
    lockrun status reports/nightly
    lockrun list reports/

    # Free a lock whose holder is stuck, naming the hold by the fencing token status showed.
    lockrun break reports/nightly 42

    # At most 3 exports at once across the fleet (a semaphore of 3 permits).
    lockrun --url redis://cache:6379 --name vendor/export --permits 3 -- ./export.sh

    # Many readers of a snapshot at once; a refresh under the write hold runs alone.
    lockrun --url redis://cache:6379 --name snapshot --read -- ./query.sh
    lockrun --url redis://cache:6379 --name snapshot --write -- ./refresh.sh

    # Run the scheduler on the elected replica only, publishing its address; followers
    # (and scripts) ask who leads.
    lockrun --url zk://zk1:2181 --elect scheduler --value 10.0.0.7:8080 -- ./scheduler
    lockrun leader scheduler --json

The command sees LOCK_NAME and LOCK_FENCING_TOKEN (a number larger than every earlier holder's):
pass the token to storage that can reject writes from a stale holder. Under --elect it also
sees LOCK_EPOCH, the same number: the leadership's epoch.

The command runs in a process group of its own, watched by a supervisor process. When the hold
is at risk (renewals failing with a third of the lease left), or lockrun dies or stops
answering, the whole group gets SIGTERM, then SIGKILL after --grace, which must fit in that
third: the command and its children are gone before the lease can expire. See docs/lockrun.md
for what this guarantees and what it cannot (a frozen machine).

EXIT STATUS:
    the command's own status (128+N if it died of signal N); 0 when status, list or break
    did what was asked; or
      3  break: that fencing token no longer holds the lock; nothing was changed;
         leader: nobody leads the election
     64  invalid arguments, URL, lock name or options
     69  the lock service could not be reached
     70  lockrun failed otherwise (also: the backend cannot do status, list, break,
         leader, --permits, --read, --write or --elect)
     75  the lock stayed held elsewhere for the whole --wait
     76  the hold (or leadership) was at risk or lost while the command ran; the command
         was stopped
    126  the command could not be executed
    127  the command was not found";
