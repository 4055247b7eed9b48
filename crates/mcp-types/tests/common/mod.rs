//! Shared by the round-trip tests: every generated type, found by its schema name.

use serde_json::Value;

include!("../generated/types.rs");

pub(crate) fn check<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<Value, String> {
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("deserialize: {e}"))?;
    serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))
}

macro_rules! dispatch_arm {
    ($module:ident; $($name:literal => $ty:ty,)*) => {
        pub(crate) fn $module(name: &str, value: &Value) -> Option<Result<Value, String>> {
            match name {
                $($name => Some(check::<$ty>(value)),)*
                _ => None,
            }
        }
    };
}

pub(crate) mod by_name {
    use super::check;
    use serde_json::Value;
    for_each_type!(dispatch_arm);
}
