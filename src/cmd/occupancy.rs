//! A schedule as JSON with the occupancy it was built for. (A launch's resources and
//! occupancy on a GPU are computed once, by `experiment::Experiment`.)

use gpu::Occupancy;

/// `schedule` as JSON with the occupancy it was built for under `occupancy`.
pub fn schedule_json(
    schedule: &graph_partition::Schedule,
    occ: Option<&Occupancy>,
) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(schedule)?;
    if let (Some(o), Some(obj)) = (occ, v.as_object_mut()) {
        obj.insert("occupancy".into(), serde_json::to_value(o)?);
    }
    serde_json::to_string_pretty(&v)
}
