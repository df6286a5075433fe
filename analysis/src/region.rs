//! Names of the data structures ("regions") loads read, by id: a pointer parameter's buffer,
//! a module `.global` / `.const` variable, or the buffer a field of a by-value struct
//! parameter points to (see the crate's README). `report` re-exports [`region_name`], its
//! public path.

use launch::BoundLaunch;
use ptx_parser::Function;

/// The name of data structure `r`: parameter `r`, module variable `r - nparams`, or
/// `<param>+<offset>` for the buffer a struct field points to.
pub fn region_name(f: &Function, launch: &BoundLaunch, r: u32) -> Option<String> {
    if r as usize >= launch::STRUCT_REGION0 {
        let b = launch
            .field_buffers()
            .nth(r as usize - launch::STRUCT_REGION0)?;
        let p = launch.params.iter().find(|p| {
            matches!(&p.value, launch::BoundValue::Bytes { buffers, .. }
                if buffers.iter().any(|x| x.base == b.base))
        })?;
        return Some(format!("{}+{}", p.name, b.offset));
    }
    match f.params.get(r as usize) {
        Some(p) => Some(p.name.clone()),
        None => launch
            .module_vars
            .get((r as usize).checked_sub(launch.params.len())?)
            .map(|v| v.name.clone()),
    }
}
