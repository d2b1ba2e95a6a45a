/**
 * CPU kernels: loss (being written).
 *
 * @module
 */
