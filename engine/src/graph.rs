//! The rubric dependency graph: every `dependsOn` entry exists, lies in the same question, is not the
//! criterion itself, and the graph has no cycle. The acyclic graph gives the scoring order.

use crate::fasthash::HashMap;

use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::error::{ErrorCode, ValidationError};
use crate::pointer::{Seg, pointer};
use crate::submission::{Question, Submission};

/// Checks every question's dependencies and returns, per question, its criteria indices in
/// dependency order (a criterion after everything it depends on). A question whose graph has a
/// defect gets an empty order; the document is then invalid and is not scored.
pub(crate) fn check(
    submission: &Submission<'_>,
    errors: &mut Vec<ValidationError>,
) -> Vec<Vec<usize>> {
    let Some(questions) = &submission.questions else {
        return Vec::new();
    };
    // Ids written but rejected (bad pattern) are known too, so references to them are not
    // reported a second time; an unreadable id (missing, not a string) could be any id.
    let mut owner: HashMap<&str, Owner> = HashMap::default();
    let mut ids_unreadable = false;
    for (q, question) in questions.iter().enumerate() {
        let Some(criteria) = &question.criteria else {
            ids_unreadable = true;
            continue;
        };
        for criterion in criteria {
            match (criterion.id, criterion.written_id) {
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
    questions
        .iter()
        .enumerate()
        .map(|(q, question)| order(q, question, &known, errors))
        .collect()
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
struct Known<'n> {
    owner: HashMap<&'n str, Owner>,
    ids_unreadable: bool,
}

fn order(
    q: usize,
    question: &Question<'_>,
    known: &Known<'_>,
    errors: &mut Vec<ValidationError>,
) -> Vec<usize> {
    let Some(criteria) = &question.criteria else {
        return Vec::new();
    };
    let mut local: HashMap<&str, usize> = HashMap::default();
    for (c, criterion) in criteria.iter().enumerate() {
        if let Some(id) = criterion.id {
            local.entry(id.value).or_insert(c);
        }
    }
    let mut graph: DiGraph<usize, usize> = DiGraph::with_capacity(criteria.len(), criteria.len());
    let nodes: Vec<NodeIndex> = (0..criteria.len()).map(|c| graph.add_node(c)).collect();
    let mut sound = true;
    let entry_path = |c: usize, i: usize| {
        pointer(&[
            Seg::Key("questions"),
            Seg::Index(q),
            Seg::Key("rubric"),
            Seg::Key("criteria"),
            Seg::Index(c),
            Seg::Key("dependsOn"),
            Seg::Index(i),
        ])
    };
    for (c, criterion) in criteria.iter().enumerate() {
        let own = criterion.id.map(|id| id.value);
        for &(i, dependency) in &criterion.depends_on {
            let name = dependency.value;
            let defect = if own == Some(name) {
                Some((
                    ErrorCode::SelfDependency,
                    format!("criterion {name:?} cannot depend on itself"),
                ))
            } else if let Some(&target) = local.get(name) {
                // Edge from the dependency to the dependent: a topological order scores it first.
                graph.add_edge(nodes[target], nodes[c], i);
                None
            } else if let Some(&Owner::Question(other)) = known.owner.get(name) {
                Some((
                    ErrorCode::CrossQuestionDependency,
                    format!(
                        "criterion {name:?} belongs to question {other}; dependencies stay within a question"
                    ),
                ))
            } else if known.owner.contains_key(name) || known.ids_unreadable {
                // The id itself was rejected, or is unreadable: reported where it is written.
                sound = false;
                None
            } else {
                Some((
                    ErrorCode::UnknownDependency,
                    format!("no criterion has the id {name:?}"),
                ))
            };
            if let Some((code, message)) = defect {
                sound = false;
                errors.push(ValidationError::new(
                    code,
                    entry_path(c, i),
                    dependency.at,
                    message,
                ));
            }
        }
    }
    let mut cyclic = false;
    for component in tarjan_scc(&graph) {
        if component.len() < 2 {
            continue;
        }
        cyclic = true;
        let mut members: Vec<usize> = component.iter().map(|n| graph[*n]).collect();
        members.sort_unstable();
        let names: Vec<String> = members
            .iter()
            .map(|&c| {
                criteria[c]
                    .id
                    .map_or_else(|| format!("#{c}"), |id| format!("{:?}", id.value))
            })
            .collect();
        let message = format!("dependency cycle among criteria {}", names.join(", "));
        for &c in &members {
            for &(i, dependency) in &criteria[c].depends_on {
                // A self entry is a self_dependency, not part of the cycle.
                let on_cycle = local
                    .get(dependency.value)
                    .is_some_and(|&t| t != c && members.contains(&t));
                if on_cycle {
                    errors.push(ValidationError::new(
                        ErrorCode::DependencyCycle,
                        entry_path(c, i),
                        dependency.at,
                        message.clone(),
                    ));
                }
            }
        }
    }
    if !sound || cyclic {
        return Vec::new();
    }
    match toposort(&graph, None) {
        Ok(sorted) => sorted.into_iter().map(|n| graph[n]).collect(),
        Err(_) => Vec::new(),
    }
}
