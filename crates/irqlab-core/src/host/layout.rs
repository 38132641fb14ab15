//! Where the host keeps its cores and vectors: inline for the common one-core, one-vector
//! host, in vectors otherwise. The model's code is the same for both (`Host<T, L>`); the
//! one-core layout turns every `core(c)` and `vector(v)` into a field access, without the
//! bounds check and address arithmetic of an index, which the hot path of a run pays several
//! times per packet (see benches/README.md).

use super::{Core, Vector};

/// Access to the host's cores and vectors by index.
pub(crate) trait Layout {
    /// Always exactly one core.
    const ONE_CORE: bool;
    fn new(cores: Vec<Core>, vectors: Vec<Vector>) -> Self;
    fn core(&self, c: usize) -> &Core;
    fn core_mut(&mut self, c: usize) -> &mut Core;
    fn vector(&self, v: usize) -> &Vector;
    fn vector_mut(&mut self, v: usize) -> &mut Vector;
    /// Core `c` and vector `v` together.
    fn both(&mut self, c: usize, v: usize) -> (&mut Core, &mut Vector);
    fn cores_mut(&mut self) -> &mut [Core];
    fn vectors(&self) -> &[Vector];
}

/// One core with one vector, kept inline.
pub(crate) struct One {
    core: Core,
    vector: Vector,
}

impl Layout for One {
    const ONE_CORE: bool = true;
    fn new(mut cores: Vec<Core>, mut vectors: Vec<Vector>) -> One {
        assert!(
            cores.len() == 1 && vectors.len() == 1,
            "the one-core layout"
        );
        One {
            core: cores.remove(0),
            vector: vectors.remove(0),
        }
    }
    #[inline(always)]
    fn core(&self, c: usize) -> &Core {
        debug_assert_eq!(c, 0);
        &self.core
    }
    #[inline(always)]
    fn core_mut(&mut self, c: usize) -> &mut Core {
        debug_assert_eq!(c, 0);
        &mut self.core
    }
    #[inline(always)]
    fn vector(&self, v: usize) -> &Vector {
        debug_assert_eq!(v, 0);
        &self.vector
    }
    #[inline(always)]
    fn vector_mut(&mut self, v: usize) -> &mut Vector {
        debug_assert_eq!(v, 0);
        &mut self.vector
    }
    #[inline(always)]
    fn both(&mut self, c: usize, v: usize) -> (&mut Core, &mut Vector) {
        debug_assert_eq!((c, v), (0, 0));
        (&mut self.core, &mut self.vector)
    }
    #[inline(always)]
    fn cores_mut(&mut self) -> &mut [Core] {
        std::slice::from_mut(&mut self.core)
    }
    #[inline(always)]
    fn vectors(&self) -> &[Vector] {
        std::slice::from_ref(&self.vector)
    }
}

/// Any number of cores and vectors.
pub(crate) struct Many {
    cores: Vec<Core>,
    vectors: Vec<Vector>,
}

impl Layout for Many {
    const ONE_CORE: bool = false;
    fn new(cores: Vec<Core>, vectors: Vec<Vector>) -> Many {
        Many { cores, vectors }
    }
    #[inline(always)]
    fn core(&self, c: usize) -> &Core {
        &self.cores[c]
    }
    #[inline(always)]
    fn core_mut(&mut self, c: usize) -> &mut Core {
        &mut self.cores[c]
    }
    #[inline(always)]
    fn vector(&self, v: usize) -> &Vector {
        &self.vectors[v]
    }
    #[inline(always)]
    fn vector_mut(&mut self, v: usize) -> &mut Vector {
        &mut self.vectors[v]
    }
    #[inline(always)]
    fn both(&mut self, c: usize, v: usize) -> (&mut Core, &mut Vector) {
        (&mut self.cores[c], &mut self.vectors[v])
    }
    #[inline(always)]
    fn cores_mut(&mut self) -> &mut [Core] {
        &mut self.cores
    }
    #[inline(always)]
    fn vectors(&self) -> &[Vector] {
        &self.vectors
    }
}
