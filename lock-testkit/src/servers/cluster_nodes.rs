//! One node's view of a Redis Cluster, parsed from its `CLUSTER NODES` reply.

/// One line of `CLUSTER NODES`: a node as the answering node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeLine {
    /// The node's 40-character id.
    pub(crate) id: String,
    /// Its client port.
    pub(crate) port: u16,
    /// Whether this line is the answering node itself.
    pub(crate) myself: bool,
    /// Whether it is a primary (`master` flag); otherwise a replica.
    pub(crate) primary: bool,
    /// Whether it is flagged `fail` or `fail?`.
    pub(crate) failing: bool,
    /// A replica's primary's id.
    pub(crate) primary_id: Option<String>,
    /// The slot ranges it serves, inclusive; migrating and importing markers are left out.
    pub(crate) slots: Vec<(u16, u16)>,
}

impl NodeLine {
    /// Whether it serves `slot`.
    pub(crate) fn serves(&self, slot: u16) -> bool {
        self.slots
            .iter()
            .any(|(first, last)| (*first..=*last).contains(&slot))
    }
}

/// The nodes in a `CLUSTER NODES` reply (raw, with its `$N` bulk header, or bare text). Lines
/// that do not parse are left out.
pub(crate) fn parse(reply: &str) -> Vec<NodeLine> {
    let body = match reply.strip_prefix('$') {
        Some(rest) => rest.split_once("\r\n").map_or("", |(_, body)| body),
        None => reply,
    };
    body.lines().filter_map(parse_line).collect()
}

/// `<id> <ip:port@cport[,hostname]> <flags> <primary> <ping> <pong> <epoch> <link> <slot>...`
fn parse_line(line: &str) -> Option<NodeLine> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 8 {
        return None;
    }
    let address = fields[1].split(['@', ',']).next()?;
    let port = address.rsplit_once(':')?.1.parse().ok()?;
    let flags: Vec<&str> = fields[2].split(',').collect();
    let slots = fields[8..]
        .iter()
        .filter(|slot| !slot.starts_with('['))
        .filter_map(|slot| match slot.split_once('-') {
            Some((first, last)) => Some((first.parse().ok()?, last.parse().ok()?)),
            None => slot.parse().ok().map(|only| (only, only)),
        })
        .collect();
    Some(NodeLine {
        id: fields[0].to_owned(),
        port,
        myself: flags.contains(&"myself"),
        primary: flags.contains(&"master"),
        failing: flags.contains(&"fail") || flags.contains(&"fail?"),
        primary_id: Some(fields[3]).filter(|id| *id != "-").map(str::to_owned),
        slots,
    })
}

/// The part of one node's view that every node must share once the cluster settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Served slot ranges (first, last, inclusive) with their owner's port, in slot order.
    pub(crate) slots: Vec<(u16, u16, u16)>,
    /// Each live node's port with its primary's port (`None` for a primary), in port order.
    pub(crate) roles: Vec<(u16, Option<u16>)>,
}

/// The layout in one view, with roles among the nodes on `live` ports only: a dead node's
/// flags may differ from view to view.
pub(crate) fn layout(view: &[NodeLine], live: &[u16]) -> Layout {
    let mut slots: Vec<(u16, u16, u16)> = view
        .iter()
        .flat_map(|node| {
            node.slots
                .iter()
                .map(|(first, last)| (*first, *last, node.port))
        })
        .collect();
    slots.sort_unstable();
    let port_of = |id: &String| {
        view.iter()
            .find(|node| node.id == *id)
            .map(|node| node.port)
    };
    let mut roles: Vec<(u16, Option<u16>)> = view
        .iter()
        .filter(|node| live.contains(&node.port))
        .map(|node| (node.port, node.primary_id.as_ref().and_then(port_of)))
        .collect();
    roles.sort_unstable();
    Layout { slots, roles }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_roles_ports_and_slots() {
        let reply = "$400\r\n\
            aaa 127.0.0.1:30001@40001,host myself,master - 0 0 1 connected 0-5460 [5461->-bbb]\n\
            bbb 127.0.0.1:30002@40002 master,fail? - 0 0 2 connected 5461 5462-10922\n\
            ccc 127.0.0.1:30003@40003 slave aaa 0 0 1 connected\n\r\n";
        let view = parse(reply);
        assert_eq!(view.len(), 3);
        assert!(view[0].myself && view[0].primary && !view[0].failing);
        assert_eq!(
            (view[0].port, view[0].slots.clone()),
            (30001, vec![(0, 5460)])
        );
        assert!(view[1].failing && view[1].serves(5461) && view[1].serves(10922));
        assert_eq!(view[2].primary_id.as_deref(), Some("aaa"));
        assert!(!view[2].primary);
        let layout = layout(&view, &[30001, 30003]);
        assert_eq!(
            layout.slots,
            vec![(0, 5460, 30001), (5461, 5461, 30002), (5462, 10922, 30002)]
        );
        assert_eq!(layout.roles, vec![(30001, None), (30003, Some(30001))]);
    }
}
