//! The rubric dependency graph: every `dependsOn` entry exists, lies in the same question, is not the
//! criterion itself, and the graph has no cycle. The acyclic graph gives the scoring order.

use std::cell::OnceCell;

use petgraph::algo::toposort;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::collect::Errors;
use crate::error::ErrorCode;
use crate::hash::HashMap;
use crate::json::Items;
use crate::pointer::{Seg, pointer};
use crate::repeats::Seen;
use crate::submission::{Criterion, Question, Submission};

/// Checks every question's dependencies.
pub(crate) fn check(submission: Submission<'_>, errors: &mut Errors) {
    let Some(questions) = submission.questions() else {
        return;
    };
    // Ids written but rejected (bad pattern) are known too, so references to them are not
    // reported a second time; an unreadable id (missing, not a string) could be any id.
    let mut owner: HashMap<&str, Owner> = HashMap::default();
    let mut ids_unreadable = false;
    for (q, node) in questions.enumerate() {
        let Some(criteria) = Question::new(node).criteria() else {
            ids_unreadable = true;
            continue;
        };
        for node in criteria {
            let criterion = Criterion::new(node);
            match (criterion.id(), criterion.written_id()) {
                (Some(id), _) => {
                    owner.entry(id.value).or_insert(Owner::Question(q));
                }
                (None, Some(written)) => {
                    owner.entry(written).or_insert(Owner::Rejected);
                }
                (None, None) => ids_unreadable = true,
            }
        }
    }
    let known = Known {
        owner,
        ids_unreadable,
    };
    for (q, node) in questions.enumerate() {
        // A question's errors stand at its own entries, and later questions stand later.
        if errors.closed_from(node.start()) {
            break;
        }
        if let Some(criteria) = Question::new(node).criteria() {
            check_question(q, criteria, &known, errors);
        }
    }
}

/// Where a criterion id was defined.
#[derive(Clone, Copy)]
enum Owner {
    /// A valid id of this question.
    Question(usize),
    /// An id that failed its own check, already reported.
    Rejected,
}

/// Every criterion id of the submission.
struct Known<'d> {
    owner: HashMap<&'d str, Owner>,
    ids_unreadable: bool,
}

/// The first criterion of each valid id in one question.
fn local_ids<'d>(criteria: Items<'d>) -> HashMap<&'d str, u32> {
    let mut local = HashMap::default();
    for (c, node) in criteria.enumerate() {
        if let Some(id) = Criterion::new(node).id() {
            local.entry(id.value).or_insert(index(c));
        }
    }
    local
}

/// Positions in lists: `u32` is enough for anything in 4 MiB.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

fn entry_path(q: usize, c: usize, i: usize) -> String {
    pointer(&[
        Seg::Key("questions"),
        Seg::Index(q),
        Seg::Key("rubric"),
        Seg::Key("criteria"),
        Seg::Index(c),
        Seg::Key("dependsOn"),
        Seg::Index(i),
    ])
}

fn check_question(q: usize, criteria: Items<'_>, known: &Known<'_>, errors: &mut Errors) {
    let local = local_ids(criteria);
    // Edges from a dependency to its dependent, as criterion indices. A repeated entry repeats its
    // edge, which changes no component.
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (c, node) in criteria.enumerate() {
        let criterion = Criterion::new(node);
        let own = criterion.id().map(|id| id.value);
        // An entry's defect depends on its text alone, so a repeated entry (already reported as
        // unique_items) is a repeat of an earlier entry with the same defect: only entries with a
        // defect need to be told apart from earlier ones.
        let mut reported = Seen::new(Items::default());
        let mut reporting = true;
        for (i, dependency) in criterion.depends_on_entries() {
            let name = dependency.value;
            let defect = if own == Some(name) {
                Some(ErrorCode::SelfDependency)
            } else if let Some(&target) = local.get(name) {
                edges.push((target, index(c)));
                None
            } else {
                match known.owner.get(name) {
                    Some(Owner::Question(_)) => Some(ErrorCode::CrossQuestionDependency),
                    // The id itself was rejected, or is unreadable: reported where it is written.
                    Some(Owner::Rejected) => None,
                    None if known.ids_unreadable => None,
                    None => Some(ErrorCode::UnknownDependency),
                }
            };
            let Some(code) = defect else { continue };
            // Past the last error that can be reported, only the edges still matter.
            reporting = reporting && !errors.closed_from(dependency.at);
            if !reporting || reported.repeat(i, name) {
                continue;
            }
            let message = || match code {
                ErrorCode::SelfDependency => format!("criterion {name:?} cannot depend on itself"),
                ErrorCode::CrossQuestionDependency => {
                    let other = match known.owner.get(name) {
                        Some(Owner::Question(other)) => *other,
                        _ => q,
                    };
                    format!(
                        "criterion {name:?} belongs to question {other}; dependencies stay within a question"
                    )
                }
                _ => format!("no criterion has the id {name:?}"),
            };
            errors.push(code, dependency.at, || entry_path(q, c, i), message);
        }
    }
    if edges.is_empty() {
        return;
    }
    cycles(q, criteria, &local, &edges, errors);
}

/// Reports every entry on a cycle: each member of a strongly connected component of two or more
/// criteria, at each of its entries naming another member, naming every member.
///
/// Every entry stands at its own offset, so the order the components are visited in does not
/// change the outcome.
fn cycles(
    q: usize,
    criteria: Items<'_>,
    local: &HashMap<&str, u32>,
    edges: &[(u32, u32)],
    errors: &mut Errors,
) {
    let components = Components::of(edges);
    let mut members: Vec<(u32, u32)> = components
        .vertices
        .iter()
        .zip(&components.component)
        .map(|(&c, &component)| (component, c))
        .collect();
    members.sort_unstable();
    // The criteria, for lookups by index.
    let handles: Vec<u32> = criteria.map(|node| node.handle()).collect();
    let Some(base) = criteria.into_iter().next() else {
        return;
    };
    let criterion = |c: u32| Criterion::new(base.at_handle(handles[c as usize]));
    for group in members.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < 2 {
            continue;
        }
        let component = group[0].0;
        let message = OnceCell::new();
        let message = || {
            message
                .get_or_init(|| {
                    let names: Vec<String> = group
                        .iter()
                        .map(|&(_, c)| {
                            criterion(c)
                                .id()
                                .map_or_else(|| format!("#{c}"), |id| format!("{:?}", id.value))
                        })
                        .collect();
                    format!("dependency cycle among criteria {}", names.join(", "))
                })
                .clone()
        };
        for &(_, c) in group {
            let member = criterion(c);
            // Members in document order: past the last error that can be reported, none can be.
            if errors.closed_from(member.at) {
                break;
            }
            for (i, dependency) in member.depends_on() {
                // A self entry is a self_dependency, not part of the cycle.
                let on_cycle = local
                    .get(dependency.value)
                    .is_some_and(|&t| t != c && components.of_criterion(t) == Some(component));
                if on_cycle {
                    errors.push(
                        ErrorCode::DependencyCycle,
                        dependency.at,
                        || entry_path(q, c as usize, i),
                        message,
                    );
                }
            }
        }
    }
}

/// The strongly connected components of a graph given by its edges (Tarjan's algorithm, without
/// recursion: a long chain of dependencies must not exhaust the stack).
struct Components {
    /// The criteria that appear in an edge, sorted.
    vertices: Vec<u32>,
    /// The component of each vertex.
    component: Vec<u32>,
}

impl Components {
    fn of(edges: &[(u32, u32)]) -> Self {
        let mut vertices: Vec<u32> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        vertices.sort_unstable();
        vertices.dedup();
        let n = vertices.len();
        let vertex = |c: u32| vertices.binary_search(&c).unwrap_or(0);
        // Adjacency lists, packed: the targets of vertex v are targets[starts[v]..starts[v + 1]].
        let mut starts = vec![0u32; n + 1];
        for &(a, _) in edges {
            starts[vertex(a) + 1] += 1;
        }
        for v in 0..n {
            starts[v + 1] += starts[v];
        }
        let mut fill = starts.clone();
        let mut targets = vec![0u32; edges.len()];
        for &(a, b) in edges {
            let slot = &mut fill[vertex(a)];
            targets[*slot as usize] = index(vertex(b));
            *slot += 1;
        }
        drop(fill);

        const UNSEEN: u32 = u32::MAX;
        let mut order = vec![UNSEEN; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut component = vec![UNSEEN; n];
        let mut stack: Vec<u32> = Vec::new();
        // The depth-first path: each vertex with the position of its next edge to follow.
        let mut path: Vec<(u32, u32)> = Vec::new();
        let mut next_order = 0u32;
        let mut components = 0u32;
        for root in 0..n {
            if order[root] != UNSEEN {
                continue;
            }
            path.push((index(root), starts[root]));
            order[root] = next_order;
            low[root] = next_order;
            next_order += 1;
            stack.push(index(root));
            on_stack[root] = true;
            while let Some(&mut (v, ref mut edge)) = path.last_mut() {
                let v = v as usize;
                if *edge < starts[v + 1] {
                    let w = targets[*edge as usize] as usize;
                    *edge += 1;
                    if order[w] == UNSEEN {
                        order[w] = next_order;
                        low[w] = next_order;
                        next_order += 1;
                        stack.push(index(w));
                        on_stack[w] = true;
                        path.push((index(w), starts[w]));
                    } else if on_stack[w] {
                        low[v] = low[v].min(order[w]);
                    }
                    continue;
                }
                path.pop();
                if let Some(&(parent, _)) = path.last() {
                    let parent = parent as usize;
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == order[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        component[w as usize] = components;
                        if w as usize == v {
                            break;
                        }
                    }
                    components += 1;
                }
            }
        }
        Components {
            vertices,
            component,
        }
    }

    /// The component of criterion `c`, if it is in an edge.
    fn of_criterion(&self, c: u32) -> Option<u32> {
        let v = self.vertices.binary_search(&c).ok()?;
        Some(self.component[v])
    }
}

/// For a valid submission, each question's criteria indices in dependency order (a criterion after
/// everything it depends on).
pub(crate) fn orders(submission: Submission<'_>) -> Vec<Vec<usize>> {
    let Some(questions) = submission.questions() else {
        return Vec::new();
    };
    questions
        .map(|node| Question::new(node).criteria().map_or_else(Vec::new, order))
        .collect()
}

fn order(criteria: Items<'_>) -> Vec<usize> {
    let local = local_ids(criteria);
    let count = criteria.len();
    let mut graph: DiGraph<usize, usize> = DiGraph::with_capacity(count, count);
    let nodes: Vec<NodeIndex> = (0..count).map(|c| graph.add_node(c)).collect();
    for (c, node) in criteria.enumerate() {
        let criterion = Criterion::new(node);
        let own = criterion.id().map(|id| id.value);
        for (i, dependency) in criterion.depends_on() {
            if own == Some(dependency.value) {
                continue;
            }
            if let Some(&target) = local.get(dependency.value) {
                // Edge from the dependency to the dependent: a topological order scores it first.
                graph.add_edge(nodes[target as usize], nodes[c], i);
            }
        }
    }
    match toposort(&graph, None) {
        Ok(sorted) => sorted.into_iter().map(|n| graph[n]).collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn components(edges: &[(u32, u32)]) -> Vec<Vec<u32>> {
        let found = Components::of(edges);
        let mut groups: Vec<(u32, u32)> = found
            .vertices
            .iter()
            .zip(&found.component)
            .map(|(&c, &k)| (k, c))
            .collect();
        groups.sort_unstable();
        let mut out: Vec<Vec<u32>> = groups
            .chunk_by(|a, b| a.0 == b.0)
            .map(|g| g.iter().map(|&(_, c)| c).collect())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn finds_strongly_connected_components() {
        assert_eq!(components(&[(0, 1), (1, 0)]), vec![vec![0, 1]]);
        assert_eq!(
            components(&[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (5, 5)]),
            vec![vec![0, 1, 2], vec![3, 4], vec![5]]
        );
        assert_eq!(
            components(&[(7, 3), (3, 9)]),
            vec![vec![3], vec![7], vec![9]]
        );
    }

    #[test]
    fn follows_a_long_chain_without_recursion() {
        let n = 1_000_000u32;
        let mut edges: Vec<(u32, u32)> = (0..n - 1).map(|c| (c, c + 1)).collect();
        edges.push((n - 1, 0));
        assert_eq!(components(&edges).len(), 1);
    }
}
