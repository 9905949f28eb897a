use super::*;

const STAY: Queueing = Queueing::Stay {
    refresh: true,
    expires: 1_000,
};

fn turn(row: &mut ClaimRow, member: Owner, claim: Claim) -> Decision {
    row.turn(member, claim, (10, 500), "label with spaces", STAY)
        .expect("turn")
        .0
}

#[test]
fn the_text_round_trips() {
    let mut row = ClaimRow::default();
    let (a, b, c) = (Owner::random(), Owner::random(), Owner::random());
    assert!(matches!(
        turn(&mut row, a, Claim::Read),
        Decision::Granted(_)
    ));
    assert!(matches!(
        turn(&mut row, b, Claim::Write),
        Decision::Waiting {
            until: Some(500),
            ahead: 0
        }
    ));
    assert!(matches!(
        turn(&mut row, c, Claim::Read),
        Decision::Waiting {
            until: None,
            ahead: 1
        }
    ));
    let decoded = ClaimRow::decode(&row.encode()).expect("decode");
    assert_eq!(decoded, row);
    assert_eq!(decoded.holders[0].label, "label with spaces");
    assert_eq!(decoded.grants, 1);
    assert_eq!(ClaimRow::decode(b"v2 1 1\n"), None);
    assert_eq!(ClaimRow::decode(b"v1 1 1 x\n"), None);
    let older = ClaimRow::decode(b"v1 7 2\n").expect("a row without a grant count");
    assert_eq!((older.fence, older.grants), (7, 0));
    assert_eq!(ClaimRow::decode(b"v1 1 1\nx 00 r\n"), None);
}

#[test]
fn tokens_rise_above_the_counter_and_the_clock() {
    let mut row = ClaimRow::default();
    let first = turn(&mut row, Owner::random(), Claim::permit(3));
    let second = turn(&mut row, Owner::random(), Claim::permit(3));
    assert_eq!(
        (first, second),
        (Decision::Granted(10), Decision::Granted(11))
    );
}

#[test]
fn a_waiting_writer_holds_back_later_readers_until_it_is_through() {
    let mut row = ClaimRow::default();
    let (reader, writer, late) = (Owner::random(), Owner::random(), Owner::random());
    turn(&mut row, reader, Claim::Read);
    assert!(matches!(
        turn(&mut row, writer, Claim::Write),
        Decision::Waiting { .. }
    ));
    assert!(matches!(
        turn(&mut row, late, Claim::Read),
        Decision::Waiting { .. }
    ));
    assert!(row.release(reader));
    assert!(matches!(
        turn(&mut row, late, Claim::Read),
        Decision::Waiting { .. }
    ));
    assert!(matches!(
        turn(&mut row, writer, Claim::Write),
        Decision::Granted(_)
    ));
    assert!(row.queue.iter().all(|waiter| waiter.member != writer));
}

#[test]
fn permits_admit_up_to_the_limit_and_refuse_another_limit() {
    let mut row = ClaimRow::default();
    for _ in 0..2 {
        assert!(matches!(
            turn(&mut row, Owner::random(), Claim::permit(2)),
            Decision::Granted(_)
        ));
    }
    let third = Owner::random();
    assert!(matches!(
        turn(&mut row, third, Claim::permit(2)),
        Decision::Waiting { .. }
    ));
    let other = row.turn(Owner::random(), Claim::permit(3), (10, 500), "x", STAY);
    assert!(other.is_err(), "another limit was accepted");
}

#[test]
fn a_try_leaves_no_entry_and_a_wait_keeps_its_place_without_rewriting() {
    let mut row = ClaimRow::default();
    turn(&mut row, Owner::random(), Claim::Write);
    let member = Owner::random();
    let (_, changed) = row
        .turn(member, Claim::Read, (10, 500), "x", Queueing::Leave)
        .expect("turn");
    assert!(!changed && row.queue.is_empty());
    turn(&mut row, member, Claim::Read);
    let keep = Queueing::Stay {
        refresh: false,
        expires: 2_000,
    };
    let (_, changed) = row
        .turn(member, Claim::Read, (10, 500), "x", keep)
        .expect("turn");
    assert!(!changed, "a wait that needs no refresh rewrote the row");
}

#[test]
fn ended_leases_and_expired_entries_go_and_only_live_holds_renew() {
    let mut row = ClaimRow::default();
    let (holder, waiter) = (Owner::random(), Owner::random());
    turn(&mut row, holder, Claim::Write);
    turn(&mut row, waiter, Claim::Write);
    assert!(row.renew(holder, 10, 600));
    assert!(!row.expire(599));
    assert!(row.expire(1_000));
    assert!(row.holders.is_empty() && row.queue.is_empty());
    assert!(!row.renew(holder, 1_000, 2_000));
}

#[test]
fn grants_are_counted_and_only_a_live_hold_takes_a_new_label() {
    let mut row = ClaimRow::default();
    let (a, b) = (Owner::random(), Owner::random());
    turn(&mut row, a, Claim::Write);
    assert!(row.release(a));
    turn(&mut row, b, Claim::Write);
    assert_eq!(row.grants, 2);
    assert!(!row.relabel(a, 20, "gone"));
    assert!(row.relabel(b, 20, "10.0.0.2:80"));
    assert_eq!(row.holders[0].label, "10.0.0.2:80");
    assert!(
        !row.relabel(b, 500, "ended"),
        "a hold whose lease ended took a label"
    );
}
