#include "check.hpp"
#include "geom/vec.hpp"

using geom::Vec2;

TEST_CASE(add_sub, "vec.add_sub") {
    Vec2 s = Vec2{1, 2} + Vec2{3, -5};
    CHECK(s == (Vec2{4, -3}));
    CHECK((Vec2{1, 2} - Vec2{3, -5}) == (Vec2{-2, 7}));
}

TEST_CASE(scale, "vec.scale") { CHECK((Vec2{1.5, -2} * 2.0) == (Vec2{3, -4})); }

TEST_CASE(dot_cross, "vec.dot_cross") {
    CHECK_NEAR(geom::dot({1, 2}, {3, 4}), 11.0);
    CHECK_NEAR(geom::cross({1, 0}, {0, 1}), 1.0);
    CHECK_NEAR(geom::cross({0, 1}, {1, 0}), -1.0);
}

TEST_CASE(length, "vec.length") { CHECK_NEAR(geom::length({3, 4}), 5.0); }

TEST_CASE(normalize, "vec.normalize") {
    Vec2 n = geom::normalize({0, -8});
    CHECK(n == (Vec2{0, -1}));
    CHECK(geom::normalize({0, 0}) == (Vec2{0, 0}));
}

TEST_CASE(rotate90, "vec.rotate90") { CHECK(geom::rotate90({2, 1}) == (Vec2{-1, 2})); }

TEST_CASE(distance, "vec.distance") { CHECK_NEAR(geom::distance({1, 1}, {4, 5}), 5.0); }

TEST_CASE(equality, "vec.equality") {
    CHECK((Vec2{0.1 + 0.2, 1}) == (Vec2{0.3, 1}));
    CHECK(!((Vec2{0.3001, 1}) == (Vec2{0.3, 1})));
}

TEST_CASE(crossing, "segment.intersects_crossing") {
    CHECK(geom::segments_intersect({0, 0}, {4, 4}, {0, 4}, {4, 0}));
}

TEST_CASE(touching, "segment.intersects_touching") {
    CHECK(geom::segments_intersect({0, 0}, {2, 0}, {2, 0}, {3, 5}));
}

TEST_CASE(disjoint, "segment.disjoint") {
    CHECK(!geom::segments_intersect({0, 0}, {1, 1}, {2, 2}, {3, 1}));
    CHECK(!geom::segments_intersect({0, 0}, {4, 0}, {0, 1}, {4, 1}));
}

TEST_CASE(collinear, "segment.collinear_overlap") {
    CHECK(geom::segments_intersect({0, 0}, {3, 0}, {2, 0}, {5, 0}));
    CHECK(!geom::segments_intersect({0, 0}, {1, 0}, {2, 0}, {5, 0}));
}
