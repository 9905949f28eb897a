//! The performance goals, judged from the measured records of one run, each with the ratio it
//! asks for and, when missed, an explanation computed from the floors measured beside it.

use crate::record::Record;
use crate::scenarios::latency::ROUND_RATES;

use super::goal_specs::{Measure, Pick, SPECS, Spec};
use super::{num, table};

/// One goal and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// What the goal asks.
    pub goal: String,
    /// The measured figures behind the verdict.
    pub measured: String,
    /// `Some(true)` met, `Some(false)` missed, `None` not measured in this run.
    pub met: Option<bool>,
    /// For a missed goal: where the gap lies, from the floors of the same run.
    pub why: String,
}

/// The row `pick` selects on `backend`: the matching system with the most pairs/s (the way
/// `bench-goals.py` matches rows, so the report and the script agree).
pub fn pick<'a>(records: &'a [Record], backend: &str, pick: &Pick) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| {
            let system = r.system.to_lowercase();
            r.backend == backend
                && r.scenario == pick.scenario
                && r.clients == pick.clients
                && pick.words.iter().any(|w| system.contains(w))
                && (pick.held == 0 || r.number("held") == Some(pick.held as f64))
        })
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
}

fn value(record: &Record, measure: Measure) -> f64 {
    match measure {
        Measure::PairsPerSecond => record.ops_per_s,
        Measure::P99Wait => record.p99_us,
        Measure::HandoffShare => record.handoffs as f64 / record.ops.max(1) as f64,
        Measure::Number(key) => record.number(key).unwrap_or(f64::NAN),
    }
}

fn judge(records: &[Record], spec: &Spec) -> Goal {
    let ours = pick(records, spec.backend, &spec.ours);
    let theirs = spec.theirs.as_ref().map(|p| pick(records, spec.backend, p));
    let (measured, ratio) = match (ours, theirs) {
        (Some(o), None) => {
            let x = value(o, spec.measure);
            (format!("{} {}", o.system, num(x)), Some(x))
        }
        (Some(o), Some(Some(t))) => {
            let (a, b) = (value(o, spec.measure), value(t, spec.measure));
            let x = a / b;
            let text = format!(
                "{} {}; {} {}: x{}",
                o.system,
                num(a),
                t.system,
                num(b),
                ratio(x, spec.want)
            );
            (text, Some(x))
        }
        _ => ("not measured in this run".to_owned(), None),
    };
    // A row without the measured field: the figure was not recorded in this run.
    let (measured, ratio) = match ratio {
        Some(x) if x.is_nan() => (format!("{measured}: the figure was not recorded"), None),
        other => (measured, other),
    };
    let met = ratio.map(|x| {
        if spec.at_least {
            x >= spec.want
        } else {
            x <= spec.want
        }
    });
    let why = match (met, ours) {
        (Some(false), Some(o)) if spec.floor.is_some() => explain(records, spec, o),
        (Some(false), Some(o)) => explain_bound(spec, o),
        (None, None) if spec.ours.held > 0 && ran(records, spec) => format!(
            "distlock did not reach {} holds on this backend in this run (see Skipped)",
            num(spec.ours.held as f64)
        ),
        _ => String::new(),
    };
    Goal {
        goal: spec.goal.to_owned(),
        measured,
        met,
        why,
    }
}

/// A measured ratio in two decimals, or four where two would print the goal's own figure (a
/// miss by less than the rounding must not read as the goal reached).
fn ratio(x: f64, want: f64) -> String {
    let two = format!("{x:.2}");
    if two.parse::<f64>() == Ok(want) && x != want {
        format!("{x:.4}")
    } else {
        two
    }
}

/// Whether the run measured the goal's scenario on its backend at all.
fn ran(records: &[Record], spec: &Spec) -> bool {
    records
        .iter()
        .any(|r| r.scenario == spec.ours.scenario && r.backend == spec.backend)
}

/// Where a missed goal's gap lies, from the same run's floor for that backend: how much of the
/// floor's figure distlock reaches, and whether the floor itself reaches the goal's ratio of the
/// peer (when it does not, no client doing that server work can).
fn explain(records: &[Record], spec: &Spec, ours: &Record) -> String {
    let Some(floor) = spec
        .floor
        .as_ref()
        .and_then(|p| pick(records, spec.backend, p))
    else {
        return "no floor measured for this backend in this run".to_owned();
    };
    let theirs = spec
        .theirs
        .as_ref()
        .and_then(|p| pick(records, spec.backend, p));
    let setting = match floor.clients {
        1 => "uncontended".to_owned(),
        clients => format!("at {clients} clients"),
    };
    let mechanism = spec
        .mechanism
        .as_ref()
        .and_then(|p| pick(records, spec.backend, p));
    let fenced = spec
        .fenced
        .as_ref()
        .and_then(|p| pick(records, spec.backend, p));
    match spec.measure {
        Measure::P99Wait => explain_wait(spec, (ours, floor, theirs), &setting),
        _ => explain_rate(spec, (ours, floor, theirs), (mechanism, fenced), &setting),
    }
}

/// A missed rate: distlock's share of the floor's pairs/s (what its client adds to that server
/// work), the floor's reach of the peer's (whether that server work allows the goal at all),
/// for a handoff, the bare wake-up's reach (whether any handoff woken that way does), and the
/// least fenced lock's reach (whether any lock that fences that way does).
fn explain_rate(
    spec: &Spec,
    (ours, floor, theirs): (&Record, &Record, Option<&Record>),
    (mechanism, fenced): (Option<&Record>, Option<&Record>),
    setting: &str,
) -> String {
    let share = ours.ops_per_s / floor.ops_per_s;
    // A floor that reaches the goal shows the server's work allows it: what distlock adds on
    // top, however little, is the gap.
    let floor_meets = theirs
        .map(|peer| floor.ops_per_s / peer.ops_per_s)
        .filter(|reach| spec.at_least && *reach >= spec.want);
    let client = if share < 0.9 {
        "the server does the same work faster for a simpler client: the gap is in distlock's \
         round trips and client work, not the server"
            .to_owned()
    } else if let Some(reach) = floor_meets {
        format!(
            "the floor reaches x{} of the peer (goal x{}): the gap to the goal is distlock's \
             client work on top of that server work",
            ratio(reach, spec.want),
            spec.want
        )
    } else if share > 1.1 {
        "above the floor: the server's work bounds it, not the client".to_owned()
    } else {
        "within 10 % of the floor: the server's work bounds it, not the client".to_owned()
    };
    let floor_reach =
        theirs
            .and_then(|peer| short_of(spec, floor, peer))
            .map_or(String::new(), |reach| {
                format!(
                    "; the floor itself reaches only x{} of the peer (goal x{}): that server work \
                 bounds the design below the goal",
                    ratio(reach, spec.want),
                    spec.want
                )
            });
    let woken = mechanism
        .zip(theirs)
        .map_or(String::new(), |(bare, peer)| woken_by(spec, bare, peer));
    let fenced = fenced
        .zip(theirs)
        .map_or(String::new(), |(least, peer)| fenced_by(spec, least, peer));
    format!(
        "floor: {} {} pairs/s {setting}; distlock {} = x{share:.2} of it{}: \
         {client}{floor_reach}{woken}{fenced}{}",
        floor.system,
        num(floor.ops_per_s),
        num(ours.ops_per_s),
        round_spread(ours, floor),
        server_cpu((ours, floor, theirs)),
    )
}

/// What the bare wake-up the design's handoff rests on (`bare`) says of the goal against
/// `peer`: short of it, no handoff woken that way reaches the goal; reaching it, the wake-up
/// allows the goal and the lock's work around each handoff is the gap.
fn woken_by(spec: &Spec, bare: &Record, peer: &Record) -> String {
    let (system, rate) = (&bare.system, num(bare.ops_per_s));
    match short_of(spec, bare, peer) {
        Some(reach) => format!(
            "; the bare wake-up alone ({system}, {rate} pairs/s) reaches only x{} of the peer: \
             no handoff woken that way reaches the goal",
            ratio(reach, spec.want)
        ),
        None => format!(
            "; the bare wake-up alone ({system}, {rate} pairs/s) reaches x{} of the peer (goal \
             x{}): the wake-up allows the goal, and the lock's work around each handoff is \
             the gap",
            ratio(bare.ops_per_s / peer.ops_per_s, spec.want),
            spec.want
        ),
    }
}

/// What the least fenced lock (`least`: the fewest server steps that still hand out a fencing
/// token the way distlock does, woken the same way) says of the goal against `peer`: short of
/// it, no lock that fences this way reaches the goal; reaching it, the lock's further work is
/// the gap.
fn fenced_by(spec: &Spec, least: &Record, peer: &Record) -> String {
    let (system, rate) = (&least.system, num(least.ops_per_s));
    match short_of(spec, least, peer) {
        Some(reach) => format!(
            "; the least fenced lock ({system}, {rate} pairs/s) reaches only x{} of the peer: \
             no lock that fences this way reaches the goal",
            ratio(reach, spec.want)
        ),
        None => format!(
            "; the least fenced lock ({system}, {rate} pairs/s) reaches x{} of the peer (goal \
             x{}): fencing this way allows the goal, and the lock's further work is the gap",
            ratio(least.ops_per_s / peer.ops_per_s, spec.want),
            spec.want
        ),
    }
}

/// The spread of distlock's share of the floor over the rounds both ran (each round's pairs/s
/// over the floor's in the same round), where the run recorded rounds: how far the whole run's
/// share could move with the machine's noise.
fn round_spread(ours: &Record, floor: &Record) -> String {
    let (Some(mine), Some(floors)) = (ours.numbers(ROUND_RATES), floor.numbers(ROUND_RATES)) else {
        return String::new();
    };
    if mine.len() != floors.len() || mine.len() < 2 || floors.contains(&0.0) {
        return String::new();
    }
    let mut shares: Vec<f64> = (mine.iter().zip(&floors))
        .map(|(mine, floor)| mine / floor)
        .collect();
    shares.sort_by(f64::total_cmp);
    let middle = shares.len() / 2;
    let median = match shares.len() % 2 {
        0 => (shares[middle - 1] + shares[middle]) / 2.0,
        _ => shares[middle],
    };
    format!(
        " (its {} rounds: x{:.2} to x{:.2}, median x{median:.2})",
        shares.len(),
        shares[0],
        shares[shares.len() - 1],
    )
}

/// `bound`'s pairs/s over the peer's, when that falls short of an at-least goal's ratio.
fn short_of(spec: &Spec, bound: &Record, peer: &Record) -> Option<f64> {
    let reach = bound.ops_per_s / peer.ops_per_s;
    (spec.at_least && reach < spec.want).then_some(reach)
}

/// The server's CPU per pair of distlock, the floor and the peer, where the run read them
/// (uncontended runs of spawned servers): the server work each one costs, measured.
fn server_cpu((ours, floor, theirs): (&Record, &Record, Option<&Record>)) -> String {
    const FIELD: &str = "server_cpu_us_per_pair";
    let (Some(mine), Some(floors)) = (ours.number(FIELD), floor.number(FIELD)) else {
        return String::new();
    };
    let peer = theirs
        .and_then(|r| Some((r, r.number(FIELD)?)))
        .map_or(String::new(), |(r, us)| {
            format!(", {} {} µs", r.system, num(us))
        });
    format!(
        "; server CPU per pair: distlock {} µs, floor {} µs{peer}",
        num(mine),
        num(floors)
    )
}

/// A missed p99 wait: distlock's wait against the floor's, and the floor's against the peer's.
/// A floor that serves in arrival order waits behind every other client's hold, so its p99 is
/// set by its rate, whatever order the peer serves in.
fn explain_wait(
    spec: &Spec,
    (ours, floor, theirs): (&Record, &Record, Option<&Record>),
    setting: &str,
) -> String {
    let share = ours.p99_us / floor.p99_us;
    let client = if share < 0.9 {
        "below the floor's wait: the server's work bounds it, not the client"
    } else if share <= 1.1 {
        "within 10 % of the floor's wait: the server's work bounds it, not the client"
    } else {
        "the floor waits less for the same server work: the gap is in distlock's round trips \
         and client work, not the server"
    };
    let floor_reach = theirs
        .map(|peer| floor.p99_us / peer.p99_us)
        .filter(|reach| !spec.at_least && *reach > spec.want)
        .map_or(String::new(), |reach| {
            format!(
                "; the floor itself waits x{} of the peer's p99 (goal at most x{}): serving in \
                 arrival order through that server work bounds the design above the goal",
                ratio(reach, spec.want),
                spec.want
            )
        });
    format!(
        "floor: {} p99 wait {} us {setting}; distlock {} us = x{share:.2} of it: \
         {client}{floor_reach}",
        floor.system,
        num(floor.p99_us),
        num(ours.p99_us),
    )
}

/// Where a missed bound on distlock's own figure lies: for renewal traffic, how many round
/// trips each hold costs per period (about one: renewals go out per hold, not batched).
fn explain_bound(spec: &Spec, ours: &Record) -> String {
    let held = ours.number("held").unwrap_or(0.0);
    match spec.measure {
        Measure::Number(key) if key.starts_with("round_trips") && held > 0.0 => {
            let per_hold = value(ours, spec.measure) / held;
            let shape = if per_hold >= 0.5 {
                "about one per hold: the holds are renewed one by one, not batched"
            } else {
                "fewer than one per hold, but more than one per service"
            };
            format!(
                "{} per hold per renewal period over {} holds: {shape}",
                num(per_hold),
                num(held)
            )
        }
        _ => format!("distlock's own figure, bounded at {}", num(spec.want)),
    }
}

/// Every goal, judged.
pub fn goals(records: &[Record]) -> Vec<Goal> {
    SPECS.iter().map(|spec| judge(records, spec)).collect()
}

/// The goals section of the report.
pub(super) fn section(records: &[Record]) -> String {
    let rows: Vec<Vec<String>> = goals(records)
        .into_iter()
        .map(|g| {
            let verdict = match g.met {
                Some(true) => "met",
                Some(false) => "**missed**",
                None => "not measured",
            };
            vec![g.goal, g.measured, verdict.to_owned(), g.why]
        })
        .collect();
    format!(
        "## Performance goals\n\nJudged by the runner from the rows below, matched as \
         `bench-goals.py` matches them (backend, scenario, clients, words of the system name; the \
         fastest match). A missed goal's explanation is computed from the floor of its backend in \
         this run.\n\n{}\n",
        table(
            &["goal", "measured", "verdict", "where the gap lies"],
            &rows
        )
    )
}
