/**
 * CPU kernels: norm (being written).
 *
 * @module
 */
