//! The state every request of a running service shares ([`AppState`]): the store, the limits,
//! the typesetter, automated marking's settings, the app's settings and what readiness checks.

use crate::config::AppConfig;
use crate::marking::jobs::Pulse;
use crate::store::Store;
use crate::store::rate::Limits;

/// Shared state of a running service.
#[derive(Debug)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// The rate limits in force.
    pub limits: Limits,
    /// The paper typesetter, and whether PDF export is enabled.
    pub typesetter: crate::typeset::Typesetter,
    /// The most papers one account may hold.
    pub max_papers: usize,
    /// Automated marking: whether it is offered, the allowance, the workers' settings.
    pub marking: crate::marking::MarkingConfig,
    /// The teachers' app: cookie security, session lifetimes, sign-in limits.
    pub app: AppConfig,
    /// What the readiness probe checks beyond the store.
    pub readiness: Readiness,
    /// The classes' returned scripts being made, and those kept.
    pub builds: crate::results::returned::builds::ClassBuilds,
    /// The maths of the app's pages, typeset once per fragment.
    pub maths: crate::app::math::Maths,
}

impl AppState {
    /// Where a class's returned scripts are made from in this service.
    pub fn returned_sources(&self) -> crate::results::returned::builds::Sources<'_> {
        crate::results::returned::builds::Sources {
            store: &self.store,
            pages: &self.marking.pages,
            typesetter: &self.typesetter,
            builds: &self.builds,
        }
    }
}

/// What readiness knows of this process beyond the store.
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    /// The pulse of this process's workers, when it runs any.
    pub pulse: Option<Pulse>,
    /// How long the workers may go without a beat and still be ready, milliseconds.
    pub max_silence_ms: i64,
}
