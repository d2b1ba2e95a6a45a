/**
 * CPU kernels: rope (being written).
 *
 * @module
 */
