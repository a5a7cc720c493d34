//! Starting a deployment's workers as configured: the marker its flags name and, when it seeds
//! live marking with reference questions, the seeds ([`crate::calibration::seeds`]). Apart from
//! [`super::worker`] so that the workers' loop knows nothing of calibration, whose private service
//! starts workers of its own.

use super::MarkingConfig;
use super::jobs::LiveSeeds;
use super::worker::{Workers, spawn_with};
use crate::calibration::seeds::Seeds;
use crate::store::Store;

/// Starts `config.workers` workers on `store` with the configured marker and seeds; an error when
/// the marker cannot be built.
pub fn spawn(store: Store, config: MarkingConfig) -> Result<Workers, String> {
    let marker = config.marker.build()?;
    let seeds = config
        .seeds
        .clone()
        .map(|seeds| Box::new(Seeds::new(seeds)) as Box<dyn LiveSeeds>);
    Ok(spawn_with(store, config, marker, seeds))
}
