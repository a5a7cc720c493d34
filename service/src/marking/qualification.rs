//! A marker qualifies before it marks live.
//!
//! Three defences, each decided per question when it is marked (so a calibration saved while the
//! service runs counts from the next question):
//! - **Calibration saved.** `examkit marker calibrate --save` records how far the configured
//!   marker and model agree with a reference set's trusted decisions in the deployment's
//!   database ([`crate::store::qualifications`]); the latest for the marker and model counts.
//! - **The bar.** With `--marker-qualify MIN_AGREEMENT`, a marker whose latest calibration is
//!   below the bar, made a false award (or an award on a clean, blank or mark-scheme page), or is
//!   missing, marks nothing live: each question is saved `needs_review`, unmarked (nothing
//!   awarded, every mark possible), with the review flag `marker_unqualified`, and the marker is
//!   not called. This holds for every marker, the built-in one included: it is deterministic, but
//!   whether its answer matching suits a deployment's papers is what calibration measures.
//! - **Seeds.** With `--marker-seed-every N`, every N live questions the marker first marks one
//!   question of a reference set (`--marker-seeds`) and its decisions are compared with the
//!   trusted ones ([`crate::calibration::seeds`]). Once the last [`SEED_WINDOW`] seeds (judged
//!   when they hold [`SEED_MIN_CRITERIA`] criteria) agree below the bar, or any seed makes a false
//!   award, the qualification is spent: later questions are saved unmarked with `marker_drifted`
//!   until a newer calibration is saved.
//!
//! Without `--marker-qualify` nothing is held back, but every automated question's `markerRun`
//! records the marker's standing (`qualification`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::MarkingConfig;
use super::flags::{MarkerFlag, MarkerFlagCode};
use crate::store::qualifications::{Qualification, Seed};
use crate::store::{Store, StoreError};

/// How many of the latest seeds the running agreement is taken over.
pub const SEED_WINDOW: i64 = 10;

/// The fewest criteria the window must hold before its agreement is judged (a false award is
/// judged at once).
pub const SEED_MIN_CRITERIA: i64 = 20;

/// Seeded reference questions (`--marker-seed-every`, `--marker-seeds`).
#[derive(Debug, Clone)]
pub struct SeedsConfig {
    /// Live questions between seeds.
    pub every: u32,
    /// The reference set the seeds are drawn from, read and checked at start.
    pub reference: Arc<crate::calibration::reference::Reference>,
}

impl PartialEq for SeedsConfig {
    fn eq(&self, other: &Self) -> bool {
        self.every == other.every
            && self.reference.dir == other.reference.dir
            && self.reference.digest == other.reference.digest
    }
}

/// Whether a saved calibration meets `bar`: criteria were compared, the agreement is at least the
/// bar, and no award was false or on a page that is not the student's writing.
pub fn meets(q: &Qualification, bar: f64) -> bool {
    q.saved.criteria > 0
        && q.agreement + 1e-12 >= bar
        && q.saved.false_awards == 0
        && q.saved.non_work_page_awards == 0
}

/// The running agreement of seeds: criteria, agreed, false awards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria agreed on.
    pub agreed: i64,
    /// False awards.
    pub false_awards: i64,
}

impl Tally {
    /// The tally of these seeds.
    pub fn of<'a>(seeds: impl IntoIterator<Item = &'a Seed>) -> Tally {
        seeds.into_iter().fold(Tally::default(), |t, s| Tally {
            criteria: t.criteria + s.saved.criteria,
            agreed: t.agreed + s.saved.agreed,
            false_awards: t.false_awards + s.saved.false_awards,
        })
    }

    /// The share agreed; `None` with no criterion.
    pub fn agreement(&self) -> Option<f64> {
        (self.criteria > 0).then(|| self.agreed as f64 / self.criteria as f64)
    }
}

/// Why the seeds say the marker drifted, given the window's tally (the newest seed included) and
/// the newest seed's own false awards; `None` while it holds.
pub fn drift(window: Tally, newest_false_awards: i64, bar: f64) -> Option<String> {
    if newest_false_awards > 0 {
        return Some(format!(
            "a seeded reference question got {newest_false_awards} false award(s)"
        ));
    }
    match window.agreement() {
        Some(agreement) if window.criteria >= SEED_MIN_CRITERIA && agreement + 1e-12 < bar => {
            Some(format!(
                "the last seeds agree on {agreement:.3} of {} criteria, below the bar {bar:.3}",
                window.criteria
            ))
        }
        _ => None,
    }
}

/// The configured marker's standing, read from the database.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// `builtin`, `external` or `openai`.
    pub marker: &'static str,
    /// The model, for markers that name one.
    pub model: Option<String>,
    /// The deployment's bar (`--marker-qualify`); `None`: nothing is held back.
    pub bar: Option<f64>,
    /// The latest saved calibration of the marker and model.
    pub latest: Option<Qualification>,
    /// The seed that found the marker drifted since that calibration, if one did.
    pub drifted: Option<Seed>,
    /// The tally of the last [`SEED_WINDOW`] seeds since that calibration.
    pub seeds: Tally,
    /// How many seeds are in that tally.
    pub seeds_counted: usize,
}

impl Standing {
    /// The bar the latest calibration is judged by: the deployment's, else the one it was run
    /// against.
    fn judged_by(&self) -> Option<f64> {
        self.bar
            .or_else(|| self.latest.as_ref().map(|q| q.saved.min_agreement))
    }

    /// Whether the latest calibration meets the bar (see [`meets`]).
    pub fn qualified(&self) -> bool {
        match (&self.latest, self.judged_by()) {
            (Some(q), Some(bar)) => meets(q, bar),
            _ => false,
        }
    }

    /// `the openai marker (model m)`.
    pub fn described(&self) -> String {
        format!(
            "the {}",
            crate::calibration::naming::described(self.marker, self.model.as_deref())
        )
    }

    /// The flag that keeps a question from being marked live, when the deployment asks for a
    /// qualified marker and this one is not (or has drifted).
    pub fn blocks(&self) -> Option<MarkerFlag> {
        let bar = self.bar?;
        let rerun = "run `examkit marker calibrate --save` with this marker and model";
        if !self.qualified() {
            let latest = match &self.latest {
                None => "none is saved".to_owned(),
                Some(q) => format!(
                    "its latest, saved {}, agrees on {:.3} of {} criteria with {} false award(s)",
                    crate::store::rfc3339(q.created_at),
                    q.agreement,
                    q.saved.criteria,
                    q.saved.false_awards + q.saved.non_work_page_awards
                ),
            };
            return Some(MarkerFlag::new(
                MarkerFlagCode::MarkerUnqualified,
                format!(
                    "not marked: {} has not qualified to mark live (--marker-qualify {bar}: a saved calibration agreeing on at least {bar:.3} of criteria with no false award; {latest}); {rerun}",
                    self.described()
                ),
            ));
        }
        let seed = self.drifted.as_ref()?;
        Some(MarkerFlag::new(
            MarkerFlagCode::MarkerDrifted,
            format!(
                "not marked: {} drifted on the seeded reference questions (seed {} at {}: the last seeds fell below the bar {bar:.3} or one got a false award), so live marking stopped; {rerun}",
                self.described(),
                seed.saved.seed,
                crate::store::rfc3339(seed.created_at)
            ),
        ))
    }

    /// What the app tells teachers while the marker is held back; `None` while it marks.
    pub fn notice(&self) -> Option<String> {
        let flag = self.blocks()?;
        let why = match flag.code {
            MarkerFlagCode::MarkerDrifted => {
                "drifted from the trusted decisions of the reference questions seeded among yours"
            }
            _ => "has not qualified on this service's reference set",
        };
        Some(format!(
            "Automated marking is held back: {} {why}, so each question is saved unmarked, for a person to review. It marks again once the service's administrator calibrates it (examkit marker calibrate --save).",
            self.described()
        ))
    }

    /// What `markerRun.qualification` records: whether the marker was qualified, the bar, the
    /// latest calibration's figures and the seeds'.
    pub fn record(&self) -> Value {
        json!({
            "qualified": self.qualified(),
            "required": self.bar,
            "drifted": self.drifted.is_some(),
            "calibration": self.latest.as_ref().map(calibration),
            "seeds": self.seeds_json(),
        })
    }

    fn seeds_json(&self) -> Value {
        if self.seeds_counted == 0 {
            return Value::Null;
        }
        json!({
            "counted": self.seeds_counted,
            "criteria": self.seeds.criteria,
            "agreement": self.seeds.agreement(),
            "falseAwards": self.seeds.false_awards,
        })
    }

    /// `/readyz`'s word for the marker: `not required` without `--marker-qualify`, else
    /// `qualified`, `not qualified` or `drifted`.
    pub fn word(&self) -> &'static str {
        if self.bar.is_none() {
            "not required"
        } else if !self.qualified() {
            "not qualified"
        } else if self.drifted.is_some() {
            "drifted"
        } else {
            "qualified"
        }
    }

    /// `/readyz`'s figures: the word, the bar, the latest calibration's figures and the seeds'
    /// (no marker or model name: the answer is public).
    pub fn figures(&self) -> Value {
        let latest = self.latest.as_ref();
        json!({
            "standing": self.word(),
            "required": self.bar,
            "agreement": latest.map(|q| q.agreement),
            "kappa": latest.and_then(|q| q.saved.kappa),
            "falseAwards": latest.map(|q| q.saved.false_awards + q.saved.non_work_page_awards),
            "calibratedAt": latest.map(|q| crate::store::rfc3339(q.created_at)),
            "seeds": self.seeds_json(),
        })
    }
}

fn calibration(q: &Qualification) -> Value {
    json!({
        "id": q.id,
        "agreement": q.agreement,
        "criteria": q.saved.criteria,
        "kappa": q.saved.kappa,
        "falseAwards": q.saved.false_awards,
        "nonWorkPageAwards": q.saved.non_work_page_awards,
        "minAgreement": q.saved.min_agreement,
        "referenceDigest": q.saved.reference_digest,
        "savedAt": crate::store::rfc3339(q.created_at),
    })
}

/// The configured marker's standing in `store`.
pub async fn standing(store: &Store, config: &MarkingConfig) -> Result<Standing, StoreError> {
    let (marker, model) = crate::calibration::naming::marker_name(&config.marker);
    let latest = store.latest_qualification(marker, model.as_deref()).await?;
    let (drifted, window) = match &latest {
        Some(q) => (
            store.drifted_seed(&q.id).await?,
            store.recent_seeds(&q.id, SEED_WINDOW).await?,
        ),
        None => (None, Vec::new()),
    };
    let standing = Standing {
        marker,
        model,
        bar: config.qualify,
        latest,
        drifted,
        seeds: Tally::of(&window),
        seeds_counted: window.len(),
    };
    crate::telemetry::marker_standing(marker, standing.qualified(), standing.drifted.is_some());
    Ok(standing)
}

/// The result of a question that is not marked because of `flag`: nothing awarded, every mark
/// still possible (`0–max`), the flag its only review flag.
pub fn unmarked_result(label: &str, max: i64, flag: &MarkerFlag) -> Value {
    super::flags::unmarked_result(label, max, flag.code.as_str(), &flag.path, &flag.message)
}

/// The marks of question `label` in a session's structured scheme (one a criterion); 0 when the
/// session has none or it does not list the label.
pub fn max_marks(scheme_json: Option<&str>, label: &str) -> i64 {
    let scheme: Option<Value> = scheme_json.and_then(|s| serde_json::from_str(s).ok());
    scheme
        .as_ref()
        .and_then(|s| s["questions"].as_array())
        .and_then(|qs| qs.iter().find(|q| q["label"].as_str() == Some(label)))
        .and_then(|q| q["criteria"].as_array())
        .map_or(0, |c| i64::try_from(c.len()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::qualifications::{NewQualification, NewSeed};

    fn saved(criteria: i64, agreed: i64, false_awards: i64) -> Qualification {
        Qualification {
            id: "q".into(),
            agreement: agreed as f64 / criteria.max(1) as f64,
            created_at: 0,
            saved: NewQualification {
                marker: "openai".into(),
                model: Some("m".into()),
                criteria,
                agreed,
                kappa: None,
                false_awards,
                non_work_page_awards: 0,
                scripts: 1,
                reference_digest: "sha256:0".into(),
                min_agreement: 0.5,
                passed: true,
            },
        }
    }

    fn seed(criteria: i64, agreed: i64, false_awards: i64) -> Seed {
        Seed {
            created_at: 0,
            saved: NewSeed {
                qualification_id: "q".into(),
                seed: "s/1".into(),
                criteria,
                agreed,
                false_awards,
                failed: false,
                drifted: false,
            },
        }
    }

    fn standing(bar: Option<f64>, latest: Option<Qualification>) -> Standing {
        Standing {
            marker: "openai",
            model: Some("m".into()),
            bar,
            latest,
            drifted: None,
            seeds: Tally::default(),
            seeds_counted: 0,
        }
    }

    #[test]
    fn the_bar_wants_agreement_and_no_false_award() {
        assert!(meets(&saved(10, 9, 0), 0.9));
        assert!(!meets(&saved(10, 8, 0), 0.9));
        assert!(
            !meets(&saved(10, 10, 1), 0.9),
            "a false award fails any bar"
        );
        let mut on_scheme = saved(10, 10, 0);
        on_scheme.saved.non_work_page_awards = 1;
        assert!(!meets(&on_scheme, 0.0));
        assert!(
            !meets(&saved(0, 0, 0), 0.0),
            "nothing compared is no qualification"
        );
    }

    #[test]
    fn without_the_flag_nothing_is_held_back_but_the_standing_is_recorded() {
        let none = standing(None, None);
        assert_eq!(none.blocks(), None);
        assert_eq!(none.word(), "not required");
        assert_eq!(none.record()["qualified"], false);
        // Judged by the bar it was calibrated against.
        let good = standing(None, Some(saved(10, 9, 0)));
        assert!(good.qualified());
        assert_eq!(good.record()["qualified"], true);
        assert_eq!(good.record()["calibration"]["criteria"], 10);
        assert!(!standing(None, Some(saved(10, 4, 0))).qualified());
    }

    #[test]
    fn under_the_flag_an_unqualified_marker_is_held_back_naming_the_bar_and_the_remedy() {
        for latest in [None, Some(saved(10, 8, 0)), Some(saved(10, 10, 1))] {
            let s = standing(Some(0.9), latest.clone());
            let flag = s.blocks().expect("held back");
            assert_eq!(flag.code, MarkerFlagCode::MarkerUnqualified);
            for needle in [
                "the openai marker (model m)",
                "0.900",
                "examkit marker calibrate --save",
            ] {
                assert!(flag.message.contains(needle), "{}", flag.message);
            }
            assert_eq!(s.word(), "not qualified", "{latest:?}");
        }
        let s = standing(Some(0.9), Some(saved(10, 9, 0)));
        assert_eq!(s.blocks(), None);
        assert_eq!(s.word(), "qualified");
        // The deployment's bar counts, not the one it was calibrated against.
        assert!(
            standing(Some(0.95), Some(saved(10, 9, 0)))
                .blocks()
                .is_some()
        );
    }

    #[test]
    fn teachers_are_told_only_while_the_marker_is_held_back() {
        assert_eq!(standing(None, None).notice(), None);
        assert_eq!(standing(Some(0.9), Some(saved(10, 9, 0))).notice(), None);
        let held = standing(Some(0.9), None).notice().expect("a notice");
        assert!(held.contains("has not qualified"), "{held}");
        let mut drifted = standing(Some(0.9), Some(saved(10, 9, 0)));
        drifted.drifted = Some(seed(5, 1, 0));
        let held = drifted.notice().expect("a notice");
        assert!(held.contains("drifted"), "{held}");
    }

    #[test]
    fn a_drifted_marker_is_held_back_until_a_newer_calibration() {
        let mut s = standing(Some(0.9), Some(saved(10, 10, 0)));
        s.drifted = Some(seed(5, 5, 1));
        let flag = s.blocks().expect("held back");
        assert_eq!(flag.code, MarkerFlagCode::MarkerDrifted);
        assert!(flag.message.contains("seed s/1"), "{}", flag.message);
        assert_eq!(s.word(), "drifted");
        assert_eq!(s.record()["drifted"], true);
    }

    #[test]
    fn seeds_drift_on_a_false_award_at_once_and_on_agreement_once_enough_is_seen() {
        let tally = |seeds: &[Seed]| Tally::of(seeds);
        assert!(drift(tally(&[seed(5, 5, 1)]), 1, 0.9).is_some());
        // One poor seed of five criteria is not judged yet…
        assert_eq!(drift(tally(&[seed(5, 2, 0)]), 0, 0.9), None);
        // …twenty criteria are.
        let poor = [seed(10, 8, 0), seed(10, 9, 0)];
        let why = drift(tally(&poor), 0, 0.9).expect("drifted");
        assert!(why.contains("0.850 of 20 criteria"), "{why}");
        let fine = [seed(10, 9, 0), seed(10, 9, 0)];
        assert_eq!(drift(tally(&fine), 0, 0.9), None, "at the bar holds");
        assert_eq!(tally(&[]).agreement(), None);
    }

    #[test]
    fn an_unmarked_result_keeps_every_mark_possible_and_reads_back() {
        let flag = MarkerFlag::new(MarkerFlagCode::MarkerUnqualified, "not qualified");
        let result = unmarked_result("2", 4, &flag);
        assert_eq!(
            result["score"],
            json!({ "awarded": 0, "possible": 4, "max": 4 })
        );
        assert_eq!(result["reviewFlags"][0]["code"], "marker_unqualified");
        let scheme = json!({ "questions": [{ "label": "2", "criteria": [{}, {}, {}] }] });
        assert_eq!(max_marks(Some(&scheme.to_string()), "2"), 3);
        assert_eq!(max_marks(Some(&scheme.to_string()), "9"), 0);
        assert_eq!(max_marks(None, "2"), 0);
    }
}
