-- Binds: name, waiter id. Sent on the connection an acquisition parks, when its entry was
-- placed before that connection was at hand: the entry now names it, so that a release can
-- interrupt it.
UPDATE /* distlock park */ `{waiters}` SET sleeper = CONNECTION_ID() WHERE name = ? AND waiter = ?
