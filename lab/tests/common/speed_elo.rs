//! A stand-in speed-Elo model, so that a test's `lab verdict` turns speed into Elo without
//! playing the time-odds games of `lab speed-elo`.

use std::path::Path;

use squall_lab::games::rules::Limit;
use squall_lab::games::sprt::Estimate;
use squall_lab::history::store::machine_id;
use squall_lab::machine::Machine;
use squall_lab::paths::LabPaths;
use squall_lab::verdict::models::{
    self, ModelEngine, SpeedEloModel, SPEED_ELO_KIND, SPEED_ELO_SCHEMA_VERSION,
};
use squall_lab::verdict::speed_elo::{fit, OddsPoint};

/// Stores in `repo`'s cache, as `lab speed-elo` would, a model of 80 Elo per doubling (70 to
/// 90) at 2+0.02 for this machine, fitted on a binary no test builds.
pub fn store_stand_in_model(repo: &Path) {
    let machine = Machine::current();
    let points = [OddsPoint {
        odds: 2.0,
        elo: Estimate {
            value: 80.0,
            ci_low: 70.0,
            ci_high: 90.0,
        },
        games: 1000,
    }];
    let model = SpeedEloModel {
        kind: SPEED_ELO_KIND.into(),
        schema_version: SPEED_ELO_SCHEMA_VERSION,
        engine: ModelEngine {
            spec: "stand-in".into(),
            commit: None,
            binary: "stand-in".into(),
        },
        limit: Limit::parse_tc("2+0.02").unwrap(),
        machine_id: machine_id(&machine),
        machine,
        elo_per_doubling: fit(&points).unwrap(),
        games: 1000,
        date: "2026-12-02".into(),
    };
    models::save(&models::models_dir(&LabPaths::new(repo)), &model).unwrap();
}
