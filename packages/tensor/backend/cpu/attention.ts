/**
 * CPU kernels: attention (being written).
 *
 * @module
 */
