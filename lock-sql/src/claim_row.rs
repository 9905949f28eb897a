//! A semaphore's or read-write lock's state, kept in one row of the claims table: its fencing
//! counter, its holders (each with a lease by the database clock) and its queue of waiting
//! acquisitions (each entry with an expiry, refreshed while it waits). Every change is a
//! read, a decision here by the shared grant rule, and a compare-and-set write of the row
//! (see [`claim_steps`](crate::claim_steps)), so the database holds the only copy.
//!
//! The row's text, one line each: `v1 <fence> <next ticket> <grants>` (rows written before
//! grants were counted have no `<grants>`, read as 0), then per holder
//! `h <member> <claim> <lease end µs> <fence> <granted at µs> <owner label>`, per waiter
//! `w <member> <ticket> <claim> <expires µs>`; a claim is `r`, `w` or `p<limit>`. Owner
//! labels have no control characters, so the label ends its line.

use lock_core::backend::{ClaimVerdict, claim_verdict};
use lock_core::{Claim, Result};

use crate::db::Owner;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClaimRow {
    /// The last fencing token granted.
    pub(crate) fence: u64,
    next_ticket: u64,
    /// How many holds the row has granted: an election's term.
    pub(crate) grants: u64,
    pub(crate) holders: Vec<RowHolder>,
    /// Waiting acquisitions in arrival order.
    pub(crate) queue: Vec<RowWaiter>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RowHolder {
    pub(crate) member: Owner,
    pub(crate) claim: Claim,
    pub(crate) lease_end: i64,
    pub(crate) fence: u64,
    pub(crate) granted_at: i64,
    pub(crate) label: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RowWaiter {
    pub(crate) member: Owner,
    ticket: u64,
    claim: Claim,
    expires: i64,
}

/// What one acquisition's turn at the row decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Granted with this fencing token.
    Granted(u64),
    /// Waiting: a blocking holder's lease ends at `until` (database time) at the latest, and
    /// `ahead` entries are before this acquisition's in the queue.
    Waiting { until: Option<i64>, ahead: u64 },
}

/// How an acquisition that is not granted stands in the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queueing {
    /// It gives up after this try: take it out of the queue.
    Leave,
    /// It waits: join the queue, keeping its place if it has one; with `refresh`, its entry
    /// now expires at `expires`.
    Stay { refresh: bool, expires: i64 },
}

impl ClaimRow {
    /// Drops holders whose lease ended and waiters whose entry expired by `now`; whether any
    /// went (which may let waiters in).
    pub(crate) fn expire(&mut self, now: i64) -> bool {
        let before = (self.holders.len(), self.queue.len());
        self.holders.retain(|holder| holder.lease_end > now);
        self.queue.retain(|waiter| waiter.expires > now);
        before != (self.holders.len(), self.queue.len())
    }

    /// `member`'s turn for `claim` at database time `now`: granted (as a holder with a lease
    /// ending at `lease_end`, a token above the counter and never below `now`), or left
    /// waiting as `queueing` says. Returns the decision and whether the row changed.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a permit limit other than the holders'.
    pub(crate) fn turn(
        &mut self,
        member: Owner,
        claim: Claim,
        (now, lease_end): (i64, i64),
        label: &str,
        queueing: Queueing,
    ) -> Result<(Decision, bool)> {
        let place = self.queue.iter().position(|waiter| waiter.member == member);
        let ahead = self.queue[..place.unwrap_or(self.queue.len())]
            .iter()
            .map(|waiter| waiter.claim);
        let holders = self
            .holders
            .iter()
            .map(|holder| (holder.claim, holder.lease_end));
        match claim_verdict(holders, ahead, claim)? {
            ClaimVerdict::Grant => {
                let fence = (self.fence + 1).max(u64::try_from(now).unwrap_or_default());
                self.fence = fence;
                self.grants += 1;
                self.holders.push(RowHolder {
                    member,
                    claim,
                    lease_end,
                    fence,
                    granted_at: now,
                    label: label.to_owned(),
                });
                self.leave(member);
                Ok((Decision::Granted(fence), true))
            }
            ClaimVerdict::Wait(until) => {
                // Before a new entry joins at the end.
                let ahead = place.unwrap_or(self.queue.len());
                let ahead = u64::try_from(ahead).unwrap_or(u64::MAX);
                let changed = match (queueing, place) {
                    (Queueing::Leave, _) => self.leave(member),
                    (Queueing::Stay { refresh, expires }, Some(at)) => {
                        if refresh {
                            self.queue[at].expires = expires;
                        }
                        refresh
                    }
                    (Queueing::Stay { expires, .. }, None) => {
                        self.next_ticket += 1;
                        let ticket = self.next_ticket;
                        let entry = RowWaiter {
                            member,
                            ticket,
                            claim,
                            expires,
                        };
                        self.queue.push(entry);
                        true
                    }
                };
                Ok((Decision::Waiting { until, ahead }, changed))
            }
        }
    }

    /// Takes `member` out of the queue; whether it was there.
    pub(crate) fn leave(&mut self, member: Owner) -> bool {
        let before = self.queue.len();
        self.queue.retain(|waiter| waiter.member != member);
        self.queue.len() != before
    }

    /// Ends `member`'s hold; whether it held.
    pub(crate) fn release(&mut self, member: Owner) -> bool {
        let before = self.holders.len();
        self.holders.retain(|holder| holder.member != member);
        self.holders.len() != before
    }

    /// Moves the lease end of `member`'s live hold to `lease_end`; whether it holds.
    pub(crate) fn renew(&mut self, member: Owner, now: i64, lease_end: i64) -> bool {
        let live = self
            .holders
            .iter_mut()
            .find(|holder| holder.member == member && holder.lease_end > now);
        live.map(|holder| holder.lease_end = lease_end).is_some()
    }

    /// Gives `member`'s live hold the label `label`; whether it holds.
    pub(crate) fn relabel(&mut self, member: Owner, now: i64, label: &str) -> bool {
        let live = self
            .holders
            .iter_mut()
            .find(|holder| holder.member == member && holder.lease_end > now);
        live.map(|holder| label.clone_into(&mut holder.label))
            .is_some()
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let (fence, ticket, grants) = (self.fence, self.next_ticket, self.grants);
        let mut text = format!("v1 {fence} {ticket} {grants}\n");
        for h in &self.holders {
            let (member, claim) = (h.member.to_hex(), claim_code(h.claim));
            let (end, fence, at, label) = (h.lease_end, h.fence, h.granted_at, &h.label);
            text.push_str(&format!("h {member} {claim} {end} {fence} {at} {label}\n"));
        }
        for w in &self.queue {
            let (member, claim) = (w.member.to_hex(), claim_code(w.claim));
            text.push_str(&format!("w {member} {} {claim} {}\n", w.ticket, w.expires));
        }
        text.into_bytes()
    }

    /// The row's state from its text; `None` when it is not one this version wrote.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        let mut head = lines.next()?.split(' ');
        if head.next()? != "v1" {
            return None;
        }
        let mut row = Self {
            fence: head.next()?.parse().ok()?,
            next_ticket: head.next()?.parse().ok()?,
            grants: head.next().map_or(Some(0), |grants| grants.parse().ok())?,
            ..Self::default()
        };
        for line in lines {
            let mut fields = line.splitn(7, ' ');
            let (kind, member) = (fields.next()?, Owner::from_hex(fields.next()?)?);
            if kind == "h" {
                row.holders.push(RowHolder {
                    member,
                    claim: parse_claim(fields.next()?)?,
                    lease_end: fields.next()?.parse().ok()?,
                    fence: fields.next()?.parse().ok()?,
                    granted_at: fields.next()?.parse().ok()?,
                    label: fields.next()?.to_owned(),
                });
            } else if kind == "w" {
                row.queue.push(RowWaiter {
                    member,
                    ticket: fields.next()?.parse().ok()?,
                    claim: parse_claim(fields.next()?)?,
                    expires: fields.next()?.parse().ok()?,
                });
            } else {
                return None;
            }
        }
        Some(row)
    }
}

fn claim_code(claim: Claim) -> String {
    match claim {
        Claim::Read => "r".to_owned(),
        Claim::Write => "w".to_owned(),
        Claim::Permit { max_permits } => format!("p{max_permits}"),
        // A claim this version does not know cannot be granted here, so never stored.
        other => other.kind().to_owned(),
    }
}

fn parse_claim(code: &str) -> Option<Claim> {
    match code {
        "r" => Some(Claim::Read),
        "w" => Some(Claim::Write),
        _ => Some(Claim::permit(code.strip_prefix('p')?.parse().ok()?)),
    }
}

#[cfg(test)]
mod tests;
