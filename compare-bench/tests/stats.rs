//! The runner's statistics and parsers.

use std::time::Duration;

use compare_bench::counters::{info_field, parse_commandstats, parse_mntr};
use compare_bench::cpu::parse_cpu;
use compare_bench::peers::curator::parse_output;
use compare_bench::stats::{Sample, Spread, percentile, summarize};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn sample(client: usize, wait: u64, previous: Option<usize>) -> Sample {
    Sample {
        client,
        wait: ms(wait),
        pair: ms(wait + 1),
        previous,
        gap: previous.map(|_| ms(2)),
    }
}

#[test]
fn percentiles_use_nearest_rank() {
    let values: Vec<Duration> = (1..=100).map(ms).collect();
    assert_eq!(percentile(&values, 0.5), ms(50));
    assert_eq!(percentile(&values, 0.99), ms(99));
    assert_eq!(percentile(&values, 1.0), ms(100));
    assert_eq!(percentile(&values, 0.0), ms(1));
    assert_eq!(percentile(&[], 0.5), Duration::ZERO);
    assert_eq!(percentile(&[ms(7)], 0.99), ms(7));
}

#[test]
fn spread_sorts_its_input() {
    let spread = Spread::of(vec![ms(3), ms(1), ms(2)]);
    assert_eq!(spread.p50_us, 2000.0);
    assert_eq!(spread.max_us, 3000.0);
}

#[test]
fn summary_counts_handoffs_fairness_and_rate() {
    // Client 0 twice in a row (no handoff), then 1, then 2: two handoffs; client 3 never.
    let samples = [
        sample(0, 1, None),
        sample(0, 2, Some(0)),
        sample(1, 3, Some(0)),
        sample(2, 4, Some(1)),
    ];
    let summary = summarize(&samples, 4, 2.0);
    assert_eq!(summary.ops, 4);
    assert_eq!(summary.ops_per_s, 2.0);
    assert_eq!(summary.handoffs, 2);
    assert_eq!((summary.fewest, summary.most), (0, 2));
    assert_eq!(summary.wait.max_us, 4000.0);
    assert_eq!(summary.handoff.p50_us, 2000.0);
}

#[test]
fn commandstats_sum_leaves_out_info() {
    let info = "# Commandstats\r\ncmdstat_set:calls=10,usec=5,usec_per_call=0.5\r\n\
                cmdstat_info:calls=99,usec=1\r\ncmdstat_evalsha:calls=5,usec=3\r\n";
    assert_eq!(parse_commandstats(info), 15);
    assert_eq!(
        info_field(
            "used_memory:1234\r\nused_memory_human:1K\r\n",
            "used_memory"
        ),
        Some(1234)
    );
}

#[test]
fn mntr_lines_parse() {
    let mntr = parse_mntr("zk_version\t3.8.0\nzk_packets_received\t42\n");
    assert_eq!(
        mntr.get("zk_packets_received").map(String::as_str),
        Some("42")
    );
}

#[test]
fn cpu_time_reads_utime_and_stime() {
    let stat = "123 (my (odd) prog) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0";
    assert_eq!(parse_cpu(stat, 100), Some(Duration::from_secs(3)));
}

#[test]
fn curator_output_parses_per_count() {
    let text = "begin 2\ns 0 1000 2000 -1 -1\ns 1 3000 4000 0 500\nend 2 0 1.5\n";
    let results = parse_output(text).expect("parse");
    assert_eq!(results.len(), 1);
    let (clients, outcome) = &results[0];
    assert_eq!(*clients, 2);
    assert_eq!(outcome.samples.len(), 2);
    assert_eq!(outcome.samples[1].previous, Some(0));
    assert_eq!(outcome.samples[1].gap, Some(Duration::from_nanos(500)));
    assert_eq!(outcome.seconds, 1.5);
    assert!(
        parse_output("s x 1 2 3 4\n").is_err(),
        "a malformed sample must fail"
    );
}

#[test]
fn monitor_counts_client_commands_only() {
    use compare_bench::monitor::is_client_command;
    assert!(is_client_command(
        r#"+1700000000.1 [0 127.0.0.1:5000] "EVALSHA" "abc" "1" "k""#
    ));
    assert!(!is_client_command(
        r#"+1700000000.1 [0 lua] "ZADD" "q" "1" "t""#
    ));
    assert!(!is_client_command(
        r#"+1700000000.1 [0 127.0.0.1:5000] "INFO" "commandstats""#
    ));
    assert!(!is_client_command(
        r#"+1700000000.1 [0 127.0.0.1:5000] "CLIENT" "SETINFO" "x""#
    ));
    assert!(!is_client_command("+OK"));
}
