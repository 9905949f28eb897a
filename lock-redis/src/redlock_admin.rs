//! What an operator sees and does on a Redlock: a majority of masters decides each answer.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use lock_core::{Error, ErrorKind, LockName, LockStatus, Result};

use crate::admin::NodeHolder;
use crate::keys::LockKeys;
use crate::redlock::quorum;
use crate::redlock_held::verdict;
use crate::redlock_steps::Masters;

impl Masters {
    /// The holder a majority shows (same owner token), and the most waiters any master
    /// counts. The holder's fencing token is the highest fence counter among its masters:
    /// the grant stored its token in a majority's counters, and the others (a grant that came
    /// too late to count, a failed store) keep an older, lower one; a majority that shows the
    /// holder includes one of the former. Its lease left is the smallest and its grant time
    /// the earliest they show.
    pub(crate) async fn status(&self, name: &LockName) -> Result<LockStatus> {
        let keys = LockKeys::new(&self.prefix, name);
        let answers = join_all(self.nodes.iter().map(|node| node.inspect(&keys))).await;
        let statuses = self.majority_answered(answers, "inspect")?;
        let waiters = statuses
            .iter()
            .map(|status| status.waiters)
            .max()
            .unwrap_or(0);
        let shown: Vec<&NodeHolder> = statuses.iter().filter_map(|s| s.holder.as_ref()).collect();
        let quorum = quorum(self.nodes.len());
        let majority = shown.iter().find_map(|holder| {
            let same: Vec<&NodeHolder> = shown
                .iter()
                .filter(|other| other.owner == holder.owner)
                .copied()
                .collect();
            (same.len() >= quorum).then_some(same)
        });
        let Some((first, majority)) = majority.and_then(|same| Some((*same.first()?, same))) else {
            return Ok(LockStatus::new(Vec::new(), waiters));
        };
        let mut info = first.info.clone();
        info.fencing_token = majority
            .iter()
            .map(|h| h.info.fencing_token)
            .max()
            .unwrap_or(0);
        info.lease_left = majority.iter().filter_map(|h| h.info.lease_left).min();
        info.granted_at = majority.iter().filter_map(|h| h.info.granted_at).min();
        Ok(LockStatus::new(vec![info], waiters))
    }

    /// The names whose lock key a majority of masters holds, sorted.
    pub(crate) async fn held_names(&self, name_prefix: &str) -> Result<Vec<LockName>> {
        let scans = self
            .nodes
            .iter()
            .map(|node| node.held_names(&self.prefix, name_prefix));
        let lists = self.majority_answered(join_all(scans).await, "list")?;
        let mut held = BTreeMap::<LockName, usize>::new();
        for name in lists.into_iter().flatten() {
            *held.entry(name).or_default() += 1;
        }
        let quorum = quorum(self.nodes.len());
        Ok(held
            .into_iter()
            .filter_map(|(name, masters)| (masters >= quorum).then_some(name))
            .collect())
    }

    /// Runs the token-checked force release on every master: `true` when a majority released.
    pub(crate) async fn force_release(&self, name: &LockName, fence: u64) -> Result<bool> {
        let keys = LockKeys::new(&self.prefix, name);
        let calls = self
            .nodes
            .iter()
            .map(|node| node.force_release(&keys, fence));
        verdict(self.nodes.len(), join_all(calls).await, "force_release")
    }

    /// The answers of the masters that answered, if they are a majority; otherwise
    /// `Unavailable`, with a failed master's error as the source.
    fn majority_answered<T>(
        &self,
        answers: Vec<Result<T>>,
        operation: &'static str,
    ) -> Result<Vec<T>> {
        let (mut answered, mut failure) = (Vec::with_capacity(answers.len()), None);
        for answer in answers {
            match answer {
                Ok(answer) => answered.push(answer),
                Err(error) => failure = Some(error),
            }
        }
        let quorum = quorum(self.nodes.len());
        if answered.len() >= quorum {
            return Ok(answered);
        }
        let error = Error::new(
            ErrorKind::Unavailable,
            format!(
                "{operation}: only {} of {} Redis masters answered; Redlock needs {quorum}",
                answered.len(),
                self.nodes.len()
            ),
        )
        .with_operation(operation);
        Err(match failure {
            Some(source) => error.with_source(source),
            None => error,
        })
    }
}
