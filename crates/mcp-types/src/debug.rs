//! [`debug_fields!`](crate::debug_fields), the `Debug` of the workspace's types that show
//! only some of their fields.

/// Implements [`Debug`](core::fmt::Debug) for a struct that shows only the fields named
/// (the others hold secrets, closures, connections or caches), as
/// `Name { field: …, .. }`: `debug_fields!(Pkce { challenge })`, and for a generic struct
/// `debug_fields!(Session<W> {})`.
///
/// A helper of the crates of this workspace, which all depend on this one; it is no part of
/// the data this crate describes.
#[doc(hidden)]
#[macro_export]
macro_rules! debug_fields {
    ($name:ident $(<$($param:ident),*>)? { $($field:ident),* $(,)? }) => {
        impl $(<$($param),*>)? ::core::fmt::Debug for $name $(<$($param),*>)? {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($name))
                    $(.field(::core::stringify!($field), &self.$field))*
                    .finish_non_exhaustive()
            }
        }
    };
}

#[cfg(test)]
mod tests {
    #[allow(dead_code)] // `secret` is what the `Debug` leaves out
    struct Shown {
        name: &'static str,
        count: u8,
        secret: &'static str,
    }
    crate::debug_fields!(Shown { name, count });

    #[allow(dead_code)]
    struct Hidden<T>(T);
    crate::debug_fields!(Hidden<T> {});

    #[test]
    fn shows_the_named_fields_only() {
        let shown = Shown {
            name: "a",
            count: 2,
            secret: "s",
        };
        assert_eq!(format!("{shown:?}"), r#"Shown { name: "a", count: 2, .. }"#);
        assert_eq!(format!("{:?}", Hidden(1)), "Hidden { .. }");
    }
}
