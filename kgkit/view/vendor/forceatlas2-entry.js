// Bundled for kgkit's viewer: ForceAtlas2 (and its web-worker supervisor) as one global.
window.graphologyLayoutForceAtlas2 = {
  forceAtlas2: require('graphology-layout-forceatlas2'),
  FA2Layout: require('graphology-layout-forceatlas2/worker'),
};
